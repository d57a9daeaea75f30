// Gives the shared library the soname HPC linkers expect (libspgemm.so.0), so an
// executable linked against libspgemm.so records the versioned name and the
// `make` install step's symlinks resolve at run time.
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libspgemm.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
