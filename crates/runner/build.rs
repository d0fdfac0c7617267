//! Links the runner with packed relative relocations (DT_RELR) on glibc.
//!
//! ICU4X's compiled data is tables of pointers, and in a position-independent
//! executable each one is a relocation the dynamic loader applies at start:
//! 25 000 of them, whose 24-byte RELA entries (0.6 MB) were read into every
//! idle runner. Packed, they take 11 KB: idle RSS 5156 → 4524 KiB, the binary
//! 0.6 MB smaller, the runner still a PIE with ASLR (docs/code-mode.md, Intl,
//! "Cost"). The packed binary needs glibc ≥ 2.36 (`GLIBC_ABI_DT_RELR`).
//! `npm run build:runner` links the runner static (`+crt-static`, a
//! static PIE: no loader nor shared library to map at each cold start,
//! docs/performance.md › "Change: the runner linked statically"), so the
//! code that applies the packed relocations is the glibc linked into it;
//! a plain `cargo build` (the Rust tests) makes a dynamically linked PIE,
//! which runs on the glibc it was built against, as the sandbox mirrors
//! the host's /lib. Either way the two agree.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
