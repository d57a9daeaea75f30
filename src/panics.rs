//! Panics inside the library are caught and become errors; they print nothing. A library
//! must not write to the caller's stderr (a caught panic is reported through the status
//! and the last-error text), so a process-wide hook is installed once that keeps quiet
//! about panics raised inside a library call or on one of the library's own threads and
//! passes every other panic to the hook that was there before.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use crate::error::{Error, Result, Status};

/// Prefix of the names of every thread the library starts (workers, helper threads):
/// their panics are the library's own.
pub const THREAD_PREFIX: &str = "spgemm-";

thread_local! {
    /// Library calls the current thread is inside (nested calls count once each).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

fn install_quiet_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let ours = DEPTH.with(|d| d.get() > 0)
                || std::thread::current()
                    .name()
                    .is_some_and(|n| n.starts_with(THREAD_PREFIX));
            if !ours {
                previous(info);
            }
        }));
    });
}

/// The text of a panic payload.
pub fn message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f`; a panic inside it (on this thread or re-raised from a worker) becomes an
/// `Internal` error carrying the panic's text, and nothing is printed.
pub fn catch<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    install_quiet_hook();
    DEPTH.with(|d| d.set(d.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    r.unwrap_or_else(|p| {
        Err(Error::new(
            Status::Internal,
            format!("panic inside libspgemm: {}", message(p.as_ref())),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_error() {
        let e = catch::<()>(|| panic!("boom {}", 7)).unwrap_err();
        assert_eq!(e.status, Status::Internal);
        assert!(e.message.contains("boom 7"), "{e}");
        assert_eq!(catch(|| Ok(3)).unwrap(), 3);
        // Nested calls unwind the depth counter correctly.
        let inner = catch(|| catch::<()>(|| panic!("inner")).map(|_| 1));
        assert!(inner.is_err());
        DEPTH.with(|d| assert_eq!(d.get(), 0));
    }
}
