#!/usr/bin/env python3
"""How long a warm cordon-runner takes from `execute` to its first frame.

    python3 bench/runner-ready.py [--runs 15] [--idle-ms 300] [--cold] RUNNER [RUNNER ...]

Each sample starts a runner on a bare socketpair (no sandbox), lets it idle
--idle-ms (a pooled runner waits idle for its take: its world is built
before `execute`, docs/runner.md), then writes the execute frame Code Mode
sends and times until the first byte of `ready` is read. Three frames:
  v1         no `extensions` (a host written for the reference runner)
  ext        the extensions createCodeMode asks for (concurrentToolCalls,
             console, timers)
  ext+fetch  the same plus fetch (createCodeMode with `network` before
             2026-12-04: the runner compiled fetch.js after `execute`)
  ext+fetch, --max-requests  the same frame to a runner started with
             `--max-requests 4`, as createCodeMode with `network` starts it
             now: fetch.js compiled before `execute` (a runner that predates
             the flag exits 2 on it: its row says so)
With --cold the frame is queued on the socket before the runner is
started, and the time runs from the start (python's fork + exec included,
alike for every runner) to the first byte of `ready`: a cold sandbox's
runner start, without the sandbox (docs/performance.md › "Change: the
runner linked statically" compares a static and a dynamic link with it).
The runners given are sampled alternately (A, B, A, B, ...), so a load drift
hits each alike; printed: the median and minimum per runner and frame, ms.
docs/performance.md › "Change: the runner compiles fetch.js only when a
program uses it" quotes it.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import time

ARGS = ["--timeout-ms", "5000", "--max-calls", "50", "--max-result-bytes", "524288",
        "--memory-bytes", "67108864", "--max-frame-bytes", "1114112", "--max-log-bytes", "65536"]
EXTENSIONS = {"concurrentToolCalls": {"maxOutstanding": 8}, "console": {"maxLogBytes": 65536},
              "timers": {"maxLive": 1000}}
WITH_FETCH = dict(EXTENSIONS, fetch={"maxRequests": 4})
# name -> (extensions of the frame, extra runner arguments)
FRAMES = {
    "v1": (None, []),
    "ext": (EXTENSIONS, []),
    "ext+fetch": (WITH_FETCH, []),
    "ext+fetch, --max-requests": (WITH_FETCH, ["--max-requests", "4"]),
}


def frame(extensions):
    execute = {"version": "code-bridge-v1", "type": "execute", "executionId": "bench",
               "code": "return 1", "tools": [],
               "limits": {"maxToolCalls": 50, "maxResultBytes": 524288, "timeoutMs": 5000}}
    if extensions is not None:
        execute["extensions"] = extensions
    return json.dumps(execute).encode() + b"\n"


def sample(runner, payload, idle_s, extra, cold=False):
    ours, theirs = socket.socketpair()
    if cold:
        ours.sendall(payload)
        start = time.perf_counter()
    child = subprocess.Popen([runner, *ARGS, *extra], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, close_fds=False,
                             preexec_fn=lambda: os.dup2(theirs.fileno(), 3))
    theirs.close()
    if not cold:
        time.sleep(idle_s)
        start = time.perf_counter()
    try:
        if not cold:
            ours.sendall(payload)
        first = ours.recv(65536)
    except BrokenPipeError:  # exited already (a flag it does not know)
        first = b""
    elapsed = (time.perf_counter() - start) * 1e3
    ours.close()
    child.wait()
    if not first.startswith(b"{"):
        if extra:
            return None  # a runner that predates the flag exits 2 on it
        raise SystemExit(f"{runner}: no frame back (exit {child.returncode})")
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--idle-ms", type=float, default=300)
    parser.add_argument("--cold", action="store_true", help="frame queued before the start; time from the start")
    parser.add_argument("runners", nargs="+")
    options = parser.parse_args()
    print("| runner | frame | n | median ms | min ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, (extensions, extra) in FRAMES.items():
        payload = frame(extensions)
        # By position: the same binary may be given twice (an A/A run).
        samples = [[] for _ in options.runners]
        for _ in range(options.runs):
            for at, runner in enumerate(options.runners):
                samples[at].append(sample(runner, payload, options.idle_ms / 1000, extra, options.cold))
                if options.cold:
                    time.sleep(0.02)
        for at, values in enumerate(samples):
            label = f"{chr(ord('A') + at)} {options.runners[at]}"
            if None in values:
                print(f"| {label} | {name} | 0 | refused (exit 2: no such flag) | |")
                continue
            print(f"| {label} | {name} | {len(values)} | {statistics.median(values):.3f} | {min(values):.3f} |")


if __name__ == "__main__":
    main()
