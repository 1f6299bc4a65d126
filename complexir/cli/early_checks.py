"""What a command can refuse before it imports mteb and torch, which take seconds on an idle machine and close to a
minute on a busy one: names the registry does not know (with a "did you mean"), folders that do not exist or are
files. Every check here reads only the registry and the file system; the command calls one function of this module
first, and then the same checks done later (after the imports) never fire on these inputs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from complexir.api.run import check_folder_option
from complexir.cli.argument_types import did_you_mean
from complexir.hub.data_source import DATA_DIR_ENV, HUB
from complexir.registry.benchmarks import all_specs, task_benchmarks


def check_benchmarks(names: Sequence[str] | None) -> None:
    """Every ``--benchmark`` is a registered benchmark (its name or folder, any case)."""
    specs = all_specs()
    known = {key.lower() for spec in specs for key in (spec.name, spec.folder)}
    for name in names or ():
        if name.lower() not in known:
            raise ValueError(f"unknown benchmark {name!r}{did_you_mean(name, [s.name for s in specs])}; known: "
                             f"{', '.join(s.name for s in specs)}")


def check_tasks(names: Sequence[str] | None, benchmarks: Sequence[str] | None = None) -> None:
    """Every ``--task`` is a registered task (exact name, as mteb names it); with ``--benchmark`` too, at least one
    of them belongs to those benchmarks (the others are filtered out, as ``complexir run`` always did)."""
    known = task_benchmarks()
    for name in names or ():
        if name not in known:
            hint = did_you_mean(name, known)
            listing = "" if hint else f"; known: {', '.join(sorted(known))}"
            raise ValueError(f"unknown task {name!r}{hint}{listing}")
    if names and benchmarks:
        wanted = {b.lower() for b in benchmarks}
        folders = {spec.name: spec.folder for spec in all_specs()}
        if not any({known[n].lower(), folders[known[n]].lower()} & wanted for n in names):
            raise ValueError(f"no task to run: the task(s) {', '.join(names)} belong to "
                             f"{', '.join(sorted({known[n] for n in names}))}, not to --benchmark "
                             f"{', '.join(benchmarks)}")


def check_data_dir(data_dir: str | None, environ: Mapping[str, str] = os.environ) -> Path | None:
    """``--data-dir`` (else ``$COMPLEXIR_DATA_DIR``) is ``hub`` or an existing folder; returns that folder (None:
    the Hub or the demos)."""
    chosen, where = (data_dir, "--data-dir") if data_dir else (environ.get(DATA_DIR_ENV), f"${DATA_DIR_ENV}")
    if not chosen or chosen == HUB:
        return None
    folder = Path(chosen).expanduser()
    if not folder.exists():
        raise FileNotFoundError(f"{where} {chosen}: no such folder (a folder holding built benchmark folders, or "
                                f"{HUB!r} for the Hub; leave it out for the demo data)")
    if not folder.is_dir():
        raise NotADirectoryError(f"{where} {chosen}: not a folder")
    return folder


def check_benchmark_folders(data_dir: Path, tasks: Sequence[str] | None, benchmarks: Sequence[str] | None) -> None:
    """The data dir holds the benchmark folder (``<data dir>/<folder>/``) of every ``--task``, or else of at least
    one benchmark asked for (``--benchmark``, default all): what is inside each is checked by the tasks later."""
    specs = {spec.name: spec for spec in all_specs()}
    if tasks:
        of_task = task_benchmarks()
        for task in tasks:
            spec = specs[of_task[task]]
            if not (data_dir / spec.folder).is_dir():
                raise FileNotFoundError(f"{task}: no benchmark folder {data_dir / spec.folder} (data dir {data_dir}); "
                                        f"build it with `complexir build {spec.folder} --out "
                                        f"{data_dir / spec.folder}`")
        return
    wanted = [spec for spec in specs.values()
              if not benchmarks or {spec.name.lower(), spec.folder.lower()} & {b.lower() for b in benchmarks}]
    if not any((data_dir / spec.folder).is_dir() for spec in wanted):
        folders = ", ".join(f"{spec.folder}/" for spec in wanted)
        raise FileNotFoundError(f"data dir {data_dir} holds no benchmark folder ({folders}); build one with "
                                "`complexir build`")


def check_existing_folders(option: str, values: Iterable[str | None]) -> None:
    """Folders the command reads (``report RESULTS``, ``compare RESULTS...``) exist."""
    for value in values:
        if value is None:
            continue
        path = Path(value).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"{option} {value}: no such folder")
        if not path.is_dir():
            raise NotADirectoryError(f"{option} {value}: not a folder")


def check_model_names(args: argparse.Namespace) -> None:
    """``--model`` and ``--first-stage`` are an existing folder or a valid Hub id (whether the Hub has it is
    asked later); ``--runs`` exists."""
    from complexir.upstream.release import local_folder

    if args.model not in (None, "", "default"):
        local_folder(args.model, "--model")
    first_stage = getattr(args, "first_stage", None)
    if first_stage and not Path(first_stage).expanduser().exists():
        local_folder(first_stage, "--first-stage")
    runs = getattr(args, "runs", None)
    if runs and not Path(runs).expanduser().exists():
        raise FileNotFoundError(f"--runs {runs}: no such runs folder or run file")


def check_run_arguments(args: argparse.Namespace) -> None:
    """``complexir run``: everything about its arguments that the registry and the file system can tell."""
    check_benchmarks(args.benchmark)
    check_tasks(args.task, args.benchmark)
    data_dir = check_data_dir(args.data_dir)
    if data_dir is not None:
        check_benchmark_folders(data_dir, args.task, args.benchmark)
    for option in ("--cache", "--output"):
        check_folder_option(option, getattr(args, option[2:].replace("-", "_"), None))
    check_model_names(args)
