#!/usr/bin/env bash
# The cargo `npm run build:addon` gives `napi build` (as $CARGO). napi
# always passes `--target <triple>`, so cargo compiled every dependency of
# the addon into target/<triple>/release, apart from target/release, where
# `npm run build:runner` and the static builds then compiled the crates
# they share again (38 in a CI log: tokio's macros, syn, serde, nix, …).
# For the host's own triple, `--target` changes where the build goes, not
# what is built (same triple, profile and flags): without it the addon is
# built in target/release beside the rest, and its library is copied to
# target/<triple>/<profile>, where napi takes it from. Any other target
# (scripts/release-build.sh cross-builds) passes through unchanged.
#
# The `cordon` CLI stays a build of its own (build:runner), and cargo then
# compiles tokio, the launcher, the egress engine and the proc macros they
# use again for the CLI's feature set (~50 s of CI): the two trees still
# differ in `syn` (`fold` vs `visit`) and `memchr` (`default`). The CLI no
# longer needs tokio's `signal` feature (it takes its signals with sigwait:
# host/host_signals.rs), which had kept the two builds apart on purpose: in
# one invocation it would have given the addon's supervision runtime a
# signal driver (3 more descriptors in every provider; round 15's R15-1
# probe counts them).
set -euo pipefail
host=$(rustc -vV | sed -n 's/^host: //p')
args=()
native=0
profile=debug
while (($#)); do
  if [[ $1 == --target && ${2-} == "$host" ]]; then
    native=1
    shift 2
    continue
  fi
  [[ $1 == --release ]] && profile=release
  args+=("$1")
  shift
done
# The real cargo: $CARGO names this script.
env -u CARGO cargo "${args[@]}"
if ((native)); then
  dir=$(env -u CARGO cargo metadata --format-version 1 --no-deps | node -e 'let s = ""; process.stdin.on("data", (c) => { s += c; }).on("end", () => process.stdout.write(JSON.parse(s).target_directory));')
  mkdir -p "$dir/$host/$profile"
  # A link, not a copy into the old file: that one may be a hard link to
  # a cached artifact of an earlier `--target` build.
  ln -f "$dir/$profile/libcordon.so" "$dir/$host/$profile/libcordon.so"
fi
