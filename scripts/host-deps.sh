#!/usr/bin/env bash
# Installs the host packages cordon needs on Debian/Ubuntu, only when missing:
# bubblewrap (the sandbox backend), uidmap (newuidmap/newgidmap: a non-root
# provider's sandboxes run as its subordinate ids), a C compiler with glibc's static
# archive (the security battery compiles its attacker statically) and python3
# (__test__/cli-python.test.js runs examples/python; the mediated-network tests
# run /usr/bin/python3 and /usr/bin/curl inside sandboxes, where only /usr is
# bound, so a python3 elsewhere on PATH is not enough; minimal images lack both)
# and openssl (the Code Mode fetch tests generate a throwaway CA).
# deploy/k8s's tests (__test__/deploy-k8s*.test.js) need python3-seccomp (to apply
# its seccomp profile as a container runtime does), setcap (libcap2-bin: the image's
# file-capability newuidmap) and the pinned schema validator, PyPI
# kubernetes-validate, in a virtualenv of its own (python3-venv), installed here
# with registry access; the tests then run it with networking cut.
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
/usr/bin/python3 -c 'import seccomp' >/dev/null 2>&1 || missing+=(python3-seccomp)
# __test__/security/orphan-init.test.js holds a sandbox's init at its fork
# with strace's syscall delay injection (-e inject=clone:delay_exit=…).
command -v strace >/dev/null 2>&1 || missing+=(strace)
/usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
[ -x /usr/sbin/setcap ] || missing+=(libcap2-bin)
# crates/egress/tests/proxy_listener.rs makes a listener in a network
# namespace of its own: `unshare -rn` (util-linux) and `ip` (iproute2).
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ ! -e /usr/lib/x86_64-linux-gnu/libc.a ] && [ ! -e /usr/lib/aarch64-linux-gnu/libc.a ]; then
  missing+=(libc6-dev)
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  as_root=(false)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${as_root[*]}" = false ]; then
    echo "cordon needs: apt-get install -y ${missing[*]} (run it as root)" >&2
    exit 1
  fi
  echo "installing ${missing[*]}" >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# The Kubernetes schema validator and its dependencies, pinned
# (kubernetes-validate.constraints.txt; its version is the newest Kubernetes
# whose schemas it bundles; __test__/deploy-k8s-support.js names the same one).
k8s_validate_version=1.37.0
k8s_validate_venv=/opt/cordon-ci/kubernetes-validate-$k8s_validate_version
if [ ! -x "$k8s_validate_venv/bin/kubernetes-validate" ]; then
  if [ "${as_root[*]}" = false ]; then
    echo "cordon's tests need: python3 -m venv $k8s_validate_venv && $k8s_validate_venv/bin/pip install -c scripts/kubernetes-validate.constraints.txt kubernetes-validate==$k8s_validate_version (as root)" >&2
    exit 1
  fi
  echo "installing kubernetes-validate $k8s_validate_version in $k8s_validate_venv" >&2
  "${as_root[@]}" rm -rf "$k8s_validate_venv"
  "${as_root[@]}" /usr/bin/python3 -m venv "$k8s_validate_venv"
  "${as_root[@]}" "$k8s_validate_venv/bin/pip" install --quiet --disable-pip-version-check \
    -c "$(dirname "$0")/kubernetes-validate.constraints.txt" "kubernetes-validate==$k8s_validate_version"
fi
