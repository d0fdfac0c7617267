#!/usr/bin/env bash
# Builds every native file of one platform package for one Rust target, as
# `npm run build` does for the host: the napi addon (cordon.<platform>.node),
# cordon-runner (static), the cordon CLI, cordon-egress-relay and
# cordon-exec-agent (both static). The
# release workflow (.github/workflows/release.yml) runs it per target on a
# native runner (x64 / arm64; musl ones inside Alpine), then packs with
# `node npm/pack.js --platform <platform>`, which takes the binaries from
# target/<triple>/release.
# Usage: scripts/release-build.sh x86_64-unknown-linux-musl
set -euo pipefail
target="$1"
case "$target" in
  x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu) addon_flags="" ;;
  # A musl cdylib must link libc dynamically (Node loads it with dlopen).
  x86_64-unknown-linux-musl | aarch64-unknown-linux-musl) addon_flags="-C target-feature=-crt-static" ;;
  *) echo "release-build.sh: unsupported target $target (see package.json napi.targets)" >&2; exit 1 ;;
esac
cd "$(dirname "$0")/.."
RUSTFLAGS="$addon_flags" npx napi build --platform --release --target "$target" --js binding.js --dts binding.d.ts
cargo rustc --release --target "$target" -p cordon-runner --bin cordon-runner -- -C target-feature=+crt-static
cargo build --release --target "$target" -p cordon-cli
cargo rustc --release --target "$target" -p cordon-egress-relay --bin cordon-egress-relay -- -C target-feature=+crt-static
cargo rustc --release --target "$target" -p cordon-exec-agent --bin cordon-exec-agent -- -C target-feature=+crt-static
