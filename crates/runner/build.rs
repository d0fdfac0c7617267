//! Links the runner with packed relative relocations (DT_RELR) on glibc.
//!
//! ICU4X's compiled data is tables of pointers, and in a position-independent
//! executable each one is a relocation the dynamic loader applies at start:
//! 25 000 of them, whose 24-byte RELA entries (0.6 MB) were read into every
//! idle runner. Packed, they take 11 KB: idle RSS 5156 → 4524 KiB, the binary
//! 0.6 MB smaller, the runner still a PIE with ASLR (docs/code-mode.md, Intl,
//! "Cost"). The packed binary needs glibc ≥ 2.36 (`GLIBC_ABI_DT_RELR`); the
//! runner runs on the glibc it was built against (a dynamically linked PIE,
//! the sandbox mirrors the host's /lib), so the two agree.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
