//! The panic boundary and last-error bookkeeping shared by every entry point.

use std::cell::RefCell;
use std::ffi::{CStr, CString};

use parking_lot::Mutex;

use super::spgemm_status_t;
use crate::error::{Error, Result, Status};

/// An error text; `None` is the empty one, which owns no memory: a successful call (which
/// clears the text) frees the failure's message and allocates nothing, so no memory of the
/// library outlives the call sequence that made it (a failure's text is freed by the next
/// successful call on the same thread or handle).
type Text = Option<CString>;

thread_local! {
    /// Message of the calling thread's most recent failed call (any object).
    static THREAD_LAST_ERROR: RefCell<Text> = const { RefCell::new(None) };
}

/// Last-error text kept by a handle.
#[derive(Default)]
pub struct LastError(Mutex<Text>);

impl LastError {
    pub fn set(&self, msg: &str) {
        set_text(&mut self.0.lock(), msg);
    }
    pub fn ptr(&self) -> *const std::ffi::c_char {
        // The CString's buffer stays put until the next `set`; the header documents that.
        text_ptr(&self.0.lock())
    }
}

fn to_cstring(msg: &str) -> CString {
    CString::new(msg.replace('\0', " ")).unwrap_or_default()
}

/// Replaces `text` by `msg` (empty: `None`).
fn set_text(text: &mut Text, msg: &str) {
    *text = (!msg.is_empty()).then(|| to_cstring(msg));
}

/// The text as C reads it: the empty one is a static "".
fn text_ptr(text: &Text) -> *const std::ffi::c_char {
    text.as_deref().unwrap_or(EMPTY).as_ptr()
}

const EMPTY: &CStr = c"";

pub fn thread_last_error_ptr() -> *const std::ffi::c_char {
    THREAD_LAST_ERROR.with(|e| text_ptr(&e.borrow()))
}

/// Runs `f`, turning an error or a panic into a status code. A failure's message goes to
/// `last` (if given) and to the calling thread's last error; a success clears both, so
/// the text always describes the latest call.
pub fn guard(last: Option<&LastError>, f: impl FnOnce() -> Result<()>) -> spgemm_status_t {
    let result = crate::panics::catch(f);
    let text = match &result {
        Ok(()) => String::new(),
        Err(e) => e.to_string(),
    };
    if let Some(l) = last {
        l.set(&text);
    }
    THREAD_LAST_ERROR.with(|t| set_text(&mut t.borrow_mut(), &text));
    match result {
        Ok(()) => Status::Success as i32,
        Err(e) => e.status as i32,
    }
}

/// A NULL check that names the argument.
pub fn non_null<T>(p: *const T, name: &str) -> Result<()> {
    if p.is_null() {
        Err(Error::new(Status::NullPointer, format!("{name} is NULL")))
    } else {
        Ok(())
    }
}
