//! Links the `annal` binary as a position-dependent executable on Linux, with the unwinder
//! inside it.
//!
//! A position-independent executable of this size carries about 44,000 relative relocations,
//! which the dynamic loader applies at every start, touching every page they land in: about
//! half of the time `annal --version` took. Linked without PIE the addresses are fixed at link
//! time and start-up does no relocation. Address-space randomisation of the executable's own
//! image is what is given up; shared libraries, the stack and the heap are still randomised.
//!
//! The unwinder (panics caught per MCP call, backtraces) comes from GCC's static `libgcc_eh`
//! rather than `libgcc_s.so`: named here, before the standard library's `-lgcc_s`, it defines
//! the `_Unwind_*` symbols first, so the shared library is never needed and never loaded. Loading
//! it cost every command a library to map and relocate, and its constructor's CPU-feature probe
//! (`cpuid`, which traps to the hypervisor on a virtual machine): about a tenth of a millisecond
//! of each command's start. The archive ships with GCC beside `libgcc.a`; it is named only when
//! the linker's driver finds it (`-print-file-name`), so a toolchain without GCC's runtime
//! (clang with compiler-rt and libunwind) links as before. Cargo hands the library to every
//! target of this package, the binary's tests too, which then unwind the same way.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if target_os == "linux" && target_env == "gnu" {
        println!("cargo:rustc-link-arg-bin=annal=-no-pie");
        if static_unwinder_found() {
            println!("cargo:rustc-link-lib=static=gcc_eh");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
}

/// Whether the linker's driver (`cc` unless one is configured) knows a `libgcc_eh.a`: asked for
/// a file it does not know, it prints the bare name back.
fn static_unwinder_found() -> bool {
    let driver = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
    let Ok(output) = std::process::Command::new(driver).arg("-print-file-name=libgcc_eh.a").output() else {
        return false;
    };
    let printed = String::from_utf8_lossy(&output.stdout);
    let path = std::path::Path::new(printed.trim());
    output.status.success() && path.is_absolute() && path.is_file()
}
