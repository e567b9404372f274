//! Links the `annal` binary as a position-dependent executable on Linux.
//!
//! A position-independent executable of this size carries about 44,000 relative relocations,
//! which the dynamic loader applies at every start, touching every page they land in: about
//! half of the time `annal --version` took. Linked without PIE the addresses are fixed at link
//! time and start-up does no relocation. Address-space randomisation of the executable's own
//! image is what is given up; shared libraries, the stack and the heap are still randomised.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os == "linux" && target_env == "gnu" {
        println!("cargo:rustc-link-arg-bin=annal=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
