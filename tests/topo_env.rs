//! `SPGEMM_PROC_BIND` overrides the handle's binding option. A test binary of its own:
//! it sets the environment variable, which no other test in this process reads.

use spgemm::BindPolicy;
use spgemm::Handle;

#[test]
fn environment_overrides_the_option_and_bad_values_are_noted() {
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe { std::env::set_var("SPGEMM_PROC_BIND", "close") };
    let mut h = Handle::new(2).unwrap();
    assert_eq!(h.placement().policy, BindPolicy::Close);
    h.set_binding(BindPolicy::None).unwrap();
    assert_eq!(h.placement().policy, BindPolicy::Close, "environment wins");
    assert!(h.topology_info().contains("\"source\":\"environment\""));

    // SAFETY: as above.
    unsafe { std::env::set_var("SPGEMM_PROC_BIND", "sideways") };
    h.set_binding(BindPolicy::None).unwrap();
    assert_eq!(h.placement().policy, BindPolicy::None, "bad value ignored");
    let info = h.topology_info();
    assert!(info.contains("SPGEMM_PROC_BIND=\\\"sideways\\\""), "{info}");
    assert!(info.contains("\"source\":\"option\""), "{info}");
    // SAFETY: as above.
    unsafe { std::env::remove_var("SPGEMM_PROC_BIND") };
}
