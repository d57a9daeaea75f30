//! Fails when include/spgemm.h no longer matches what cbindgen generates from the source.
//! Regenerate with `SPGEMM_BLESS=1 cargo test --test header`.

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
    let path = root.join("include/spgemm.h");
    if std::env::var_os("SPGEMM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/spgemm.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/spgemm.h is stale: run `SPGEMM_BLESS=1 cargo test --test header` and commit it"
    );
}
