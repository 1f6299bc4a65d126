"""How long ``complexir`` takes to refuse bad input: each command below in a fresh process, timed end to end.

    python speed/bench_startup.py [--repeat 5]

Every case must fail with its one error line before mteb and torch are imported (the target: under 1 s on an idle
machine; ``tests/test_startup.py`` checks, without timing, that those modules are never imported on these paths).
The first row is a bare interpreter (``python -c pass``), the floor every command pays. Prints, per case, the
median and the slowest of ``--repeat`` runs, the exit code and the error line. Nothing is asserted: on a busy
machine the times grow with the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES: dict[str, list[str]] = {
    "unknown task": ["run", "--task", "NoSuchTask"],
    "mistyped task": ["run", "--task", "LoCoV1GovReprt"],
    "unknown benchmark": ["run", "--benchmark", "Nope"],
    "missing --data-dir": ["run", "--data-dir", "{missing}"],
    "mistyped flag": ["run", "--taks", "LoCoV1GovReport"],
    "missing --runs": ["run", "--runs", "{missing}", "--model-name", "x"],
    "missing report folder": ["report", "{missing}"],
    "missing compare folder": ["compare", "{missing}", "--out", "{missing}-out"],
    "unknown build benchmark": ["build", "nope"],
}


def time_command(command: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """(seconds, exit code, last stderr line) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    lines = proc.stderr.strip().splitlines()
    return elapsed, proc.returncode, lines[-1] if lines else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per case (default: 5)")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    missing = str(Path(tempfile.gettempdir()) / "complexir-bench-startup-no-such-folder")
    rows = [("python -c pass", [sys.executable, "-c", "pass"])]
    rows += [(name, [sys.executable, "-m", "complexir.cli.main", *(a.format(missing=missing) for a in argv)])
             for name, argv in CASES.items()]
    print(f"{'case':<26} {'median s':>9} {'max s':>7} {'exit':>5}  error line")
    for name, command in rows:
        runs = [time_command(command, env) for _ in range(args.repeat)]
        times = [t for t, _, _ in runs]
        _, code, line = runs[-1]
        print(f"{name:<26} {statistics.median(times):>9.2f} {max(times):>7.2f} {code:>5}  {line[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
