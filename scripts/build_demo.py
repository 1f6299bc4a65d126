"""Rebuild the demo benchmarks shipped in ``complexir/demo/`` from their hand-written upstream files.

    python scripts/build_demo.py [BENCHMARK ...]     # all of them by default

Each demo is written in its benchmark's upstream format under ``tests/fixtures/<benchmark>/demo_upstream/`` and
built with that benchmark's own loading script, so the demo is exactly what a real build produces.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from complexir.cli.main import main as complexir

REPO = Path(__file__).resolve().parents[1]

# benchmark -> extra `complexir build` arguments for its demo
DEMO_BUILD_ARGS: dict[str, list[str]] = {
    "crumb": ["--subset", "clinical_trial", "legal_qa", "paper_retrieval", "--no-progress"],
    "irsc": ["--no-progress"],
    "locov1": ["--no-progress"],
    # the collections' text stands in as small local files (relative to the demo folder)
    "coveragebench": ["--docs", "cast2020=jsonl:corpus/cast2020.jsonl", "crux_duc04=jsonl:corpus/crux_duc04.jsonl",
                      "--no-progress"],
}


def build(benchmark: str) -> int:
    # relative paths from the repository root: the cards record the source, and it must not be this machine's
    os.chdir(REPO)
    source = Path("tests") / "fixtures" / benchmark / "demo_upstream"
    out = Path("complexir") / "demo" / benchmark
    return complexir(["build", benchmark, "--source", str(source), "--out", str(out), "--overwrite",
                      *DEMO_BUILD_ARGS[benchmark]])


if __name__ == "__main__":
    names = sys.argv[1:] or list(DEMO_BUILD_ARGS)
    sys.exit(max(build(name) for name in names))
