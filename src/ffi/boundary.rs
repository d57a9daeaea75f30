//! The panic boundary and last-error bookkeeping shared by every entry point.

use std::cell::RefCell;
use std::ffi::CString;

use parking_lot::Mutex;

use super::spgemm_status_t;
use crate::error::{Error, Result, Status};

thread_local! {
    /// Message of the calling thread's most recent failed call (any object).
    static THREAD_LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Last-error text kept by a handle.
#[derive(Default)]
pub struct LastError(Mutex<CString>);

impl LastError {
    pub fn set(&self, msg: &str) {
        set_text(&mut self.0.lock(), msg);
    }
    pub fn ptr(&self) -> *const std::ffi::c_char {
        // The CString's buffer stays put until the next `set`; the header documents that.
        self.0.lock().as_ptr()
    }
}

fn to_cstring(msg: &str) -> CString {
    CString::new(msg.replace('\0', " ")).unwrap_or_default()
}

/// Replaces `text` by `msg`; clearing a text already empty allocates nothing (every
/// successful call clears it).
fn set_text(text: &mut CString, msg: &str) {
    if !(msg.is_empty() && text.is_empty()) {
        *text = to_cstring(msg);
    }
}

pub fn thread_last_error_ptr() -> *const std::ffi::c_char {
    THREAD_LAST_ERROR.with(|e| e.borrow().as_ptr())
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
