"""Rebuild the demo benchmarks shipped in ``complexir/demo/`` from their hand-written upstream files.

    python scripts/build_demo.py [BENCHMARK ...]     # all of them by default

Each demo is written in its benchmark's upstream format under ``tests/fixtures/<benchmark>/demo_upstream/`` and
built with that benchmark's own loading script, so the demo is exactly what a real build produces. What to build
(the demo's subsets and options) is in each benchmark's spec (``complexir.registry.benchmarks``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from complexir.cli.main import main as complexir
from complexir.registry.benchmarks import all_specs, get_spec

REPO = Path(__file__).resolve().parents[1]

def build(benchmark: str) -> int:
    # relative paths from the repository root: the cards record the source, and it must not be this machine's
    os.chdir(REPO)
    spec = get_spec(benchmark)
    source = spec.demo_source or str(Path("tests") / "fixtures" / spec.folder / "demo_upstream")
    out = Path("complexir") / "demo" / spec.folder
    return complexir(["build", spec.folder, "--source", source, "--out", str(out), "--overwrite",
                      *spec.demo_build_args])


if __name__ == "__main__":
    names = sys.argv[1:] or [spec.folder for spec in all_specs()]
    sys.exit(max(build(name) for name in names))
