#!/bin/sh
# R7b-4: run squat.js in a private mount namespace with a fresh /tmp (as root), so the
# squatted /tmp/cordon-session-owners-65534 disturbs no other provider on the host.
here=$(cd "$(dirname "$0")" && pwd)
for mode in dir link; do
  unshare -m --propagation private sh -c "mount -t tmpfs tmpfs /tmp && cd '$here' && TMPDIR=/tmp node squat.js $mode" || rc=1
done
exit ${rc:-0}
