//! Stand-in driver for the SpMM benchmark mode until `spgemm-bench` (branch `bench`) lands:
//! `spmm-bench spmm ARGS` runs `bench/spmm_mode.rs`, the module `spgemm-bench` will mount.

#[path = "bench/spmm_mode.rs"]
mod spmm_mode;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("spmm") => std::process::exit(spmm_mode::main(&args[1..])),
        _ => {
            eprintln!("{}", spmm_mode::USAGE);
            std::process::exit(2);
        }
    }
}
