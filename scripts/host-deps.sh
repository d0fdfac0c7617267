#!/usr/bin/env bash
# Installs the host packages cordon needs on Debian/Ubuntu, only when missing:
# bubblewrap (the sandbox backend), uidmap (newuidmap/newgidmap: a non-root
# provider's sandboxes run as its subordinate ids), a C compiler with glibc's static
# archive (the security battery compiles its attacker statically) and python3
# (__test__/cli-python.test.js runs examples/python; the mediated-network tests
# run /usr/bin/python3 and /usr/bin/curl inside sandboxes, where only /usr is
# bound, so a python3 elsewhere on PATH is not enough; minimal images lack both)
# and openssl (the Code Mode fetch tests generate a throwaway CA).
# Uses apt-get directly as root, sudo otherwise; prints the command if neither works.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
[ -x /usr/bin/newuidmap ] && [ -x /usr/bin/newgidmap ] || missing+=(uidmap)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
[ -x /usr/bin/python3 ] || missing+=(python3)
[ -x /usr/bin/curl ] || missing+=(curl)
# __test__/code-mode-fetch.test.js makes its test CA with openssl.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# crates/egress/tests/proxy_listener.rs makes a listener in a network
# namespace of its own: `unshare -rn` (util-linux) and `ip` (iproute2).
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ ! -e /usr/lib/x86_64-linux-gnu/libc.a ] && [ ! -e /usr/lib/aarch64-linux-gnu/libc.a ]; then
  missing+=(libc6-dev)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "cordon needs: apt-get install -y ${missing[*]} (run it as root)" >&2
  exit 1
fi
echo "installing ${missing[*]}" >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
