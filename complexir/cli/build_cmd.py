"""``complexir build BENCHMARK --source SRC --out DIR``: upstream release → standard layout.

Each loading script in ``complexir.loading_scripts`` exposes ``add_arguments(parser)`` for its own options
and ``build(args) -> Path``; ``--source``, ``--out`` and ``--overwrite`` are common to all.
"""

from __future__ import annotations

import argparse
from importlib import import_module

LOADING_SCRIPTS = ("crumb", "irsc", "locov1", "coveragebench")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build", help="build a benchmark folder (a Hub dataset repo) from its upstream release"
    )
    benchmarks = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for name in LOADING_SCRIPTS:  # every one is part of the package: a failed import is a broken install
        module = import_module(f"complexir.loading_scripts.{name}")
        sub = benchmarks.add_parser(name, help=(module.__doc__ or name).strip().splitlines()[0])
        sub.add_argument("--out", required=True, help="the benchmark folder to write (atomically)")
        sub.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
        module.add_arguments(sub)  # adds --source with the benchmark's default, and its own options
        sub.set_defaults(func=module.build)
