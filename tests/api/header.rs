//! Fails when include/spgemm.h no longer matches what cbindgen generates from the source.
//! Regenerate with `SPGEMM_BLESS=1 cargo test --release --test api header` (also rewrites the Fortran module
//! include/spgemm.f90 from the new header).

use std::path::Path;

#[test]
fn header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen failed to parse the crate")
        .write(&mut out);
    let generated = String::from_utf8(out).expect("utf-8 header");
    // Only SPGEMM_* macros (and the include guard) may enter the caller's namespace: a
    // crate-internal `pub const` is picked up by cbindgen unless cbindgen.toml excludes it.
    let leaked: Vec<&str> = generated
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter(|d| !d.starts_with("SPGEMM_"))
        .collect();
    assert!(
        leaked.is_empty(),
        "non-SPGEMM_ constants in the header (add them to [export] exclude in cbindgen.toml): {leaked:?}"
    );
    let path = root.join("include/spgemm.h");
    if std::env::var_os("SPGEMM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/spgemm.h");
        // The Fortran module is generated from the header (tests/fortran_module.rs checks it).
        let status = std::process::Command::new("python3")
            .arg(root.join("scripts/gen_fortran.py"))
            .status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "include/spgemm.h written, but `python3 scripts/gen_fortran.py` failed: run it by hand"
        );
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/spgemm.h is stale: run `SPGEMM_BLESS=1 cargo test --release --test api header` and commit it"
    );
}
