#!/bin/sh
# R7-4 (open): another local user squats the non-root provider's owner-claims
# directory /tmp/cordon-session-owners-<uid> (lib/sessions/owner-claims.js,
# defaultClaimsDir) before the provider first makes it; every acquire() of
# that provider then fails. Run as root from the repository root, after
# `npm run build`. Done in a private mount namespace with a fresh /tmp so
# that concurrent uid-65534 providers on this host are not disturbed.
set -eu
exec unshare -m --propagation private sh -c '
  mount -t tmpfs -o mode=1777 r7-tmp /tmp
  setpriv --reuid=1000 --regid=1000 --clear-groups mkdir -m 0755 /tmp/cordon-session-owners-65534
  ls -ld /tmp/cordon-session-owners-65534
  node --test --test-name-pattern "end\(\) leaves no holder" __test__/security/sessions-nonroot.test.js 2>&1 \
    | grep -E "^# (pass|fail)|code|not owned|private|failed" | head -5
'
