"""``complexir build BENCHMARK --source SRC --out DIR``: upstream release → standard layout.

One subcommand per registered benchmark spec (``complexir.registry.benchmarks``): its loading script
(``BenchmarkSpec.loading_script``) exposes ``add_arguments(parser)`` for its own options and ``build(args)``;
``--out`` and ``--overwrite`` are common to all.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from complexir.hub.build_cache import add_build_options, run_build
from complexir.registry.benchmarks import BenchmarkSpec, all_specs
from complexir.upstream.options import progress_bars_off

logger = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build", help="build a benchmark folder (a Hub dataset repo) from its upstream release"
    )
    benchmarks = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for spec in all_specs():  # every one is installed: a failed import is a broken install
        module = import_module(spec.loading_script)
        sub = benchmarks.add_parser(spec.folder, help=(module.__doc__ or spec.name).strip().splitlines()[0])
        add_build_options(sub, spec)
        sub.set_defaults(func=_described(module.build, spec))


def _described(build: Callable[[argparse.Namespace], int], spec: BenchmarkSpec) -> Callable[..., int]:
    """The loading script's ``build``, with mteb's descriptive statistics of every task and the Hub Benchmark's
    ``eval.yaml`` written into the built folder before it is put in place (atomic with it)."""

    def describe(folder: Path) -> None:
        from complexir.tasks.layout_task import describe_folder  # mteb and the tasks: only for a build

        for path in describe_folder(folder, spec):
            logger.info("written: %s", path.name)

    def run(args: argparse.Namespace) -> int:
        if not getattr(args, "no_progress", False):
            return run_build(build, args, describe)
        with progress_bars_off():
            return run_build(build, args, describe)

    return run
