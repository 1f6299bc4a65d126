"""``complexir build BENCHMARK --source SRC --out DIR``: upstream release → standard layout.

One subcommand per registered benchmark spec (``complexir.benchmarks``): its loading script
(``BenchmarkSpec.loading_script``) exposes ``add_arguments(parser)`` for its own options and ``build(args)``;
``--out`` and ``--overwrite`` are common to all.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from complexir.benchmarks import BenchmarkSpec, all_specs

logger = logging.getLogger(__name__)


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
        sub.set_defaults(func=_then_describe(module.build, spec))


def _then_describe(build: Callable[[argparse.Namespace], int], spec: BenchmarkSpec) -> Callable[..., int]:
    """The loading script's ``build``, then mteb's descriptive statistics of every task on the built folder."""

    def run(args: argparse.Namespace) -> int:
        code = build(args)
        if code == 0:
            for path in write_descriptive_statistics(Path(args.out), spec):
                logger.info("descriptive statistics: %s", path)
        return code

    return run


def write_descriptive_statistics(folder: Path, spec: BenchmarkSpec) -> list[Path]:
    """mteb's descriptive statistics (``AbsTask.calculate_descriptive_statistics``) of every task of ``spec`` whose
    data ``folder`` holds, computed on that data and stored in it as ``descriptive_stats/<Task>.json``; the tasks
    read them from there (``mteb``'s metadata checks need them)."""
    from complexir.tasks import TASKS, benchmark_of
    from complexir.tasks.layout_task import DESCRIPTIVE_STATS_FOLDER

    owner = benchmark_of()
    folder = folder.resolve()
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        # tasks read <data dir>/<benchmark folder name>: a folder built under another name is linked under its own
        data_dir = folder.parent
        if folder.name != spec.folder:
            data_dir = Path(tmp)
            (data_dir / spec.folder).symlink_to(folder, target_is_directory=True)
        for cls in TASKS:
            task = cls()
            if owner[cls.metadata.name] != spec.name or not task.available_in(data_dir):
                continue
            task.data_dir = data_dir
            task.data_provenance()  # points the task's metadata at this folder's statistics
            if task.allow_missing_subsets:
                task.restrict_to_present()
                # mteb's statistics walk the metadata's subsets: only those this folder holds
                langs = task.metadata.eval_langs
                if isinstance(langs, dict):
                    task.metadata = task.metadata.model_copy(
                        update={"eval_langs": {s: langs[s] for s in task.hf_subsets}})
            task.calculate_descriptive_statistics(overwrite_results=True)
            written.append(folder / DESCRIPTIVE_STATS_FOLDER / f"{cls.metadata.name}.json")
    return written
