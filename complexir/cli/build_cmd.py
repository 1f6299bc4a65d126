"""``complexir build BENCHMARK --source SRC --out DIR``: upstream release → standard layout.

One subcommand per registered benchmark spec (``complexir.benchmarks``): its loading script
(``BenchmarkSpec.loading_script``) exposes ``add_arguments(parser)`` for its own options and ``build(args)``;
``--out`` and ``--overwrite`` are common to all.
"""

from __future__ import annotations

import argparse
from importlib import import_module

from complexir.benchmarks import all_specs


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build", help="build a benchmark folder (a Hub dataset repo) from its upstream release"
    )
    benchmarks = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for spec in all_specs():  # every one is installed: a failed import is a broken install
        module = import_module(spec.loading_script)
        sub = benchmarks.add_parser(spec.folder, help=(module.__doc__ or spec.name).strip().splitlines()[0])
        sub.add_argument("--out", required=True, help="the benchmark folder to write (atomically)")
        sub.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
        module.add_arguments(sub)  # adds --source with the benchmark's default, and its own options
        sub.set_defaults(func=module.build)
