#!/usr/bin/env python3
"""A Code Mode host in Python: cordon-runner in cordon's sandbox, via `cordon run`.

The provider (this script) offers two tools; model-written JavaScript calls
them inside the sandbox. `cordon run` relays its stdin/stdout to the
runner's fd 3, so the code-bridge-v1 protocol (JSON lines, spec:
docs/runner.md) is spoken over this process's pipes:

    execute → ready → tool.call ⇄ tool.result … → execution.result

Usage: python3 code_mode.py [--cordon PATH] [--runner PATH] [--receipt FILE]
Defaults: this checkout's target/release/{cordon,cordon-runner}, or the
CORDON_BIN / CORDON_RUNNER environment variables (an npm install puts both
in node_modules/cordon-linux-x64-gnu/).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

VERSION = "code-bridge-v1"
REPO = Path(__file__).resolve().parents[2]
LIMITS = {"maxToolCalls": 8, "maxResultBytes": 65536, "timeoutMs": 5000}

# What a model would write after reading the tool declarations.
PROGRAM = """
const city = await tools['weather.city']({ name: 'Lyon' });
const forecast = await tools['weather.forecast']({ id: city.id, days: 3 });
const warmest = forecast.reduce((a, b) => (b.high > a.high ? b : a));
return { city: city.name, days: forecast.length, warmest };
"""

CITIES = {"Lyon": {"id": "FR-69", "name": "Lyon"}}


def weather_city(args):
    return CITIES[args["name"]]


def weather_forecast(args):
    return [{"day": d, "high": 18 + (d * 7) % 5} for d in range(1, args["days"] + 1)]


TOOLS = {
    "weather.city": ("Find a city by name", weather_city),
    "weather.forecast": ("Daily highs for a city id", weather_forecast),
}


def frame(kind, **fields):
    return (json.dumps({"version": VERSION, "type": kind, **fields}) + "\n").encode()


def answer(call):
    """The tool.result frame for one tool.call: the handler's value, or its error."""
    entry = TOOLS.get(call.get("name"))
    try:
        if entry is None:
            raise KeyError(f"unknown tool {call.get('name')!r}")
        return frame("tool.result", id=call["id"], ok=True, result=entry[1](call["arguments"]))
    except Exception as error:  # a tool failure is reported to the code, not raised here
        return frame("tool.result", id=call["id"], ok=False, error={"message": str(error)})


def run(cordon, runner, receipt, code):
    """Runs `code` in the sandbox; returns (execution.result frame, cordon's exit status)."""
    argv = [cordon, "run", "--policy", "untrusted", "--receipt", receipt, "--", runner,
            "--timeout-ms", str(LIMITS["timeoutMs"])]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as child:
        tools = [{"name": name, "description": desc} for name, (desc, _) in TOOLS.items()]
        child.stdin.write(frame("execute", executionId="py-1", code=code, tools=tools, limits=LIMITS))
        child.stdin.flush()
        result = None
        for line in child.stdout:  # one JSON frame per line, until the runner closes fd 3
            message = json.loads(line)
            if message["type"] == "ready":
                effective = message["effectiveLimits"]
                if any(effective[k] > LIMITS[k] for k in LIMITS):  # spec: a host must refuse
                    child.kill()
                    raise RuntimeError(f"the runner raised a limit: {effective}")
            elif message["type"] == "tool.call":
                child.stdin.write(answer(message))
                child.stdin.flush()
            elif message["type"] == "execution.result":
                result = message
                child.stdin.close()  # half-close: the runner sees EOF, we still drain
        return result, child.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cordon", default=os.environ.get("CORDON_BIN", str(REPO / "target/release/cordon")))
    parser.add_argument("--runner", default=os.environ.get("CORDON_RUNNER", str(REPO / "target/release/cordon-runner")))
    parser.add_argument("--receipt", default=str(Path(tempfile.mkdtemp()) / "receipt.json"))
    parser.add_argument("--code", default=PROGRAM, help="JavaScript to run (default: the weather program)")
    args = parser.parse_args()
    result, status = run(args.cordon, args.runner, args.receipt, args.code)
    receipt = json.loads(Path(args.receipt).read_text())
    print(json.dumps({
        "ok": result and result["ok"],
        "result": result and result.get("result"),
        "error": result and result.get("error"),
        "toolCalls": result and result["metrics"]["toolCalls"],
        "exitStatus": status,
        "receipt": {"outcome": receipt["outcome"], "network": receipt["policy"]["network"]["mode"]},
    }, indent=2))
    return 0 if result and result["ok"] and status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
