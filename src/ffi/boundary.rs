//! The panic boundary and last-error bookkeeping shared by every entry point.

use std::cell::RefCell;
use std::ffi::CString;
use std::panic::{AssertUnwindSafe, catch_unwind};

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
        *self.0.lock() = to_cstring(msg);
    }
    pub fn ptr(&self) -> *const std::ffi::c_char {
        // The CString's buffer stays put until the next `set`; the header documents that.
        self.0.lock().as_ptr()
    }
}

fn to_cstring(msg: &str) -> CString {
    CString::new(msg.replace('\0', " ")).unwrap_or_default()
}

pub fn thread_last_error_ptr() -> *const std::ffi::c_char {
    THREAD_LAST_ERROR.with(|e| e.borrow().as_ptr())
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f`, turning an error or a panic into a status code and recording the message on
/// `last` (if given) and on the calling thread.
pub fn guard(last: Option<&LastError>, f: impl FnOnce() -> Result<()>) -> spgemm_status_t {
    let result = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(Error::new(
            Status::Internal,
            format!("panic inside libspgemm: {}", panic_message(p)),
        ))
    });
    match result {
        Ok(()) => Status::Success as i32,
        Err(e) => {
            let text = e.to_string();
            if let Some(l) = last {
                l.set(&text);
            }
            THREAD_LAST_ERROR.with(|t| *t.borrow_mut() = to_cstring(&text));
            e.status as i32
        }
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
