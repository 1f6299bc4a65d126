"""``complexir build BENCHMARK --source SRC --out DIR``: upstream release → standard layout.

One subcommand per registered benchmark spec (``complexir.registry.benchmarks``): its loading script
(``BenchmarkSpec.loading_script``) exposes ``add_arguments(parser)`` for its own flags and ``build(options)``, which
takes its typed options (``OPTIONS``, else ``complexir.upstream.options.BuildOptions``); ``--out`` and
``--overwrite`` are common to all. The parsed flags become those options here.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from types import ModuleType

from complexir.hub.build_cache import options_class, run_build
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
        add_build_options(sub, module)
        sub.set_defaults(func=_described(module, spec))


def add_build_options(parser: argparse.ArgumentParser, module: ModuleType) -> None:
    """The flags of ``complexir build <folder>``: ``--out``, ``--overwrite`` and the loading script's own."""
    parser.add_argument("--out", required=True, help="the benchmark folder to write (atomically)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    module.add_arguments(parser)  # adds --source with the benchmark's default, and its own options


def _described(module: ModuleType, spec: BenchmarkSpec) -> Callable[[argparse.Namespace], int]:
    """The loading script's ``build`` on the parsed flags, with mteb's descriptive statistics of every task and the
    Hub Benchmark's ``eval.yaml`` written into the built folder before it is put in place (atomic with it)."""

    def describe(folder: Path) -> None:
        from complexir.tasks.layout_task import describe_folder  # mteb and the tasks: only for a build

        for path in describe_folder(folder, spec):
            logger.info("written: %s", path.name)

    def run(args: argparse.Namespace) -> int:
        options = options_class(module).from_flags(vars(args))
        if options.progress:
            return run_build(module.build, options, describe)
        with progress_bars_off():  # datasets', huggingface_hub's and tqdm's bars too, not only ours
            return run_build(module.build, options, describe)

    return run
