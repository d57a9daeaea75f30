//! The C entry points for binding, high-bandwidth memory and the topology report, called
//! as a C program would (raw pointers, status codes).

use std::ffi::{CStr, c_char};
use std::ptr;

use spgemm::ffi::handle::{spgemm_create, spgemm_destroy, spgemm_handle_t, spgemm_last_error};
use spgemm::ffi::topology::*;
use spgemm::ffi::*;

fn create() -> *mut spgemm_handle_t {
    let mut h = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { spgemm_create(&mut h) }, SPGEMM_STATUS_SUCCESS);
    h
}

fn last_error(h: *mut spgemm_handle_t) -> String {
    // SAFETY: live handle; the message is NUL-terminated.
    unsafe { CStr::from_ptr(spgemm_last_error(h)) }
        .to_string_lossy()
        .into_owned()
}

fn info(h: *mut spgemm_handle_t) -> String {
    let mut needed = 0usize;
    // SAFETY: query call: buf NULL, len 0, needed writable.
    assert_eq!(
        unsafe { spgemm_topology_info(h, ptr::null_mut(), 0, &mut needed) },
        SPGEMM_STATUS_SUCCESS
    );
    assert!(needed > 2);
    let mut buf = vec![0x55 as c_char; needed];
    // SAFETY: buf has `needed` writable bytes.
    assert_eq!(
        unsafe { spgemm_topology_info(h, buf.as_mut_ptr().cast(), buf.len(), &mut needed) },
        SPGEMM_STATUS_SUCCESS
    );
    assert_eq!(needed, buf.len());
    assert_eq!(buf[needed - 1], 0, "NUL-terminated");
    // SAFETY: NUL-terminated within buf.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn topology_info_two_call_pattern() {
    let h = create();
    let text = info(h);
    assert!(text.starts_with('{') && text.ends_with('}'), "{text}");
    for key in [
        "\"cores\":",
        "\"numa_nodes\":",
        "\"workers\":",
        "\"binding\":",
        "\"hbm_present\":",
    ] {
        assert!(text.contains(key), "{key} missing in {text}");
    }
    // Too small: error naming the size, buf emptied, needed still told.
    let mut needed = 0usize;
    let mut small = [0x55 as c_char; 8];
    // SAFETY: small has 8 writable bytes.
    let st =
        unsafe { spgemm_topology_info(h, small.as_mut_ptr().cast(), small.len(), &mut needed) };
    assert_eq!(st, SPGEMM_STATUS_INVALID_VALUE);
    assert_eq!(small[0], 0);
    assert_eq!(small[1], 0x55, "nothing past the first byte is written");
    assert_eq!(needed, text.len() + 1);
    assert!(last_error(h).contains("len = 8"), "{}", last_error(h));
    // NULL arguments.
    // SAFETY: the function checks the pointers.
    unsafe {
        assert_eq!(
            spgemm_topology_info(h, ptr::null_mut(), 0, ptr::null_mut()),
            SPGEMM_STATUS_NULL_POINTER
        );
        assert_eq!(
            spgemm_topology_info(h, ptr::null_mut(), 10, &mut needed),
            SPGEMM_STATUS_NULL_POINTER
        );
        assert_eq!(
            spgemm_topology_info(ptr::null_mut(), ptr::null_mut(), 0, &mut needed),
            SPGEMM_STATUS_NULL_POINTER
        );
        spgemm_destroy(h);
    }
}

#[test]
fn binding_and_hbm_options() {
    let h = create();
    // SAFETY: live handle and valid out-pointers throughout.
    unsafe {
        let mut b = -1;
        assert_eq!(spgemm_get_thread_binding(h, &mut b), SPGEMM_STATUS_SUCCESS);
        assert!([SPGEMM_BIND_NONE, SPGEMM_BIND_CLOSE, SPGEMM_BIND_SPREAD].contains(&b));
        if std::env::var_os("SPGEMM_PROC_BIND").is_none() {
            for want in [SPGEMM_BIND_NONE, SPGEMM_BIND_CLOSE, SPGEMM_BIND_SPREAD] {
                assert_eq!(spgemm_set_thread_binding(h, want), SPGEMM_STATUS_SUCCESS);
                assert_eq!(spgemm_get_thread_binding(h, &mut b), SPGEMM_STATUS_SUCCESS);
                assert_eq!(b, want);
            }
            assert_eq!(
                spgemm_set_thread_binding(h, SPGEMM_BIND_AUTO),
                SPGEMM_STATUS_SUCCESS
            );
            assert!(info(h).contains("\"requested\":\"auto\",\"source\":\"option\""));
        }
        assert_eq!(spgemm_set_thread_binding(h, 7), SPGEMM_STATUS_INVALID_VALUE);
        assert!(last_error(h).contains("binding = 7"), "{}", last_error(h));
        assert_eq!(
            spgemm_set_thread_binding(ptr::null_mut(), SPGEMM_BIND_NONE),
            SPGEMM_STATUS_NULL_POINTER
        );
        assert_eq!(
            spgemm_get_thread_binding(h, ptr::null_mut()),
            SPGEMM_STATUS_NULL_POINTER
        );

        let (mut m, mut present) = (-1, -1);
        assert_eq!(
            spgemm_get_hbm(h, &mut m, &mut present),
            SPGEMM_STATUS_SUCCESS
        );
        assert_eq!(m, SPGEMM_HBM_AUTO);
        assert!(present == 0 || present == 1);
        for want in [SPGEMM_HBM_OFF, SPGEMM_HBM_ON, SPGEMM_HBM_AUTO] {
            assert_eq!(spgemm_set_hbm(h, want), SPGEMM_STATUS_SUCCESS);
            assert_eq!(
                spgemm_get_hbm(h, &mut m, ptr::null_mut()),
                SPGEMM_STATUS_SUCCESS
            );
            assert_eq!(m, want);
        }
        assert_eq!(spgemm_set_hbm(h, 3), SPGEMM_STATUS_INVALID_VALUE);
        assert!(last_error(h).contains("mode = 3"), "{}", last_error(h));
        assert_eq!(
            spgemm_get_hbm(h, ptr::null_mut(), &mut present),
            SPGEMM_STATUS_NULL_POINTER
        );
        spgemm_destroy(h);
    }
}

#[test]
fn constants_match_the_typed_codes() {
    use spgemm::{BindPolicy, HbmMode};
    assert_eq!(SPGEMM_BIND_AUTO, BindPolicy::Auto as i32);
    assert_eq!(SPGEMM_BIND_NONE, BindPolicy::None as i32);
    assert_eq!(SPGEMM_BIND_CLOSE, BindPolicy::Close as i32);
    assert_eq!(SPGEMM_BIND_SPREAD, BindPolicy::Spread as i32);
    assert_eq!(SPGEMM_HBM_AUTO, HbmMode::Auto as i32);
    assert_eq!(SPGEMM_HBM_OFF, HbmMode::Off as i32);
    assert_eq!(SPGEMM_HBM_ON, HbmMode::On as i32);
}
