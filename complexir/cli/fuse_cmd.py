"""``complexir fuse``: fuse the rankings of several systems (runs folders, or TREC run files) into one runs folder
that ``complexir run --runs`` scores. Methods and their exact definitions: ``complexir.runs.fusion``."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from complexir.cli.argument_types import positive_int


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fuse", help="fuse runs folders (or TREC run files) by RRF, CombSUM or CombMNZ into a runs folder")
    parser.add_argument("runs", nargs="+", metavar="RUNS",
                        help="runs folders (as complexir run --save-runs writes them), or TREC run files; two or more")
    parser.add_argument("--method", choices=("rrf", "combsum", "combmnz"), required=True,
                        help="rrf: reciprocal rank fusion; combsum / combmnz: after min-max normalisation per query")
    parser.add_argument("--k", type=int, default=60, help="RRF's k: a document scores 1/(k + rank) (default: 60)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="the runs folder to write (a TREC file when the inputs are TREC files)")
    parser.add_argument("--name", default=None,
                        help="the system name written in the runs (default: fusion/<method>, e.g. fusion/rrf-k60)")
    parser.add_argument("--depth", type=positive_int, default=None,
                        help="documents kept per query (default: every document any input ranks)")
    parser.set_defaults(func=fuse)


def fuse(args: argparse.Namespace) -> int:
    from complexir.runs.folder import RunsError, RunsFolder, RunsFolderWriter, read_run_file, write_run_file
    from complexir.runs.fusion import fuse as fuse_runs

    if len(args.runs) < 2:
        raise ValueError("complexir fuse needs two or more runs")
    if args.method == "rrf" and args.k < 0:
        raise ValueError(f"--k must be at least 0, got {args.k}")
    inputs = [Path(p).expanduser() for p in args.runs]
    out = Path(args.out).expanduser()
    for path in inputs:
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such runs folder or run file")
        if path.resolve() == out.resolve():
            raise ValueError(f"--out {out} is one of the runs fused")
    name = args.name or (f"fusion/rrf-k{args.k}" if args.method == "rrf" else f"fusion/{args.method}")
    method = f"{args.method} (k={args.k})" if args.method == "rrf" else f"{args.method} (min-max)"

    if all(p.is_file() for p in inputs):  # TREC files in, one TREC file out
        runs = [read_run_file(p) for p in inputs]
        fused = fuse_runs(runs, args.method, args.k)
        write_run_file(out, fused, name, args.depth)
        print(f"fused {len(inputs)} run files by {method} into {out.resolve()} ({len(fused)} queries)")
        return 0
    if not all(p.is_dir() for p in inputs):
        raise ValueError("complexir fuse takes runs folders or TREC files, not both")

    folders = [RunsFolder(p) for p in inputs]
    entries = folders[0].entries()
    for folder in folders[1:]:  # every input ranks the same tasks, subsets and splits
        theirs = set(folder.entries())
        for entry in set(entries) ^ theirs:
            lacking = folder if entry not in theirs else folders[0]
            raise RunsError(f"{lacking.path_of(*entry)}: no run for task {entry[0]} (subset {entry[1]}, split "
                            f"{entry[2]}), which {'the first' if lacking is folder else 'another'} runs folder has")
    digest = hashlib.sha256(f"{method} {args.depth}".encode())
    for folder in folders:
        digest.update(folder.digest.encode())
    writer = RunsFolderWriter(out, name, f"fusion-{digest.hexdigest()[:16]}", args.depth)
    data = {task: _same_data(folders, task) for task in folders[0].tasks()}  # refused before anything is written
    for entry in entries:
        runs = [run for folder in folders if (run := folder.run(*entry)) is not None]  # each has it: checked above
        fused = fuse_runs(runs, args.method, args.k)
        deepest = max(map(len, fused.values()), default=0) or 1
        writer.write(*entry, fused, data=data[entry[0]], depth=min(args.depth, deepest) if args.depth else deepest)
    writer.close()
    print(f"fused {len(folders)} runs folders by {method} into {out.resolve()}: {len(entries)} run file(s), "
          f"system {name}")
    return 0


def _same_data(folders: list, task: str) -> dict | None:
    """The data the inputs ranked for ``task``, which must be the same data (as their runs.json record it)."""
    from complexir.runs.folder import RunsError

    recorded = [(f.path, f.data(task)) for f in folders]
    known = {(path, data["revision"]) for path, data in recorded if data}
    if len({revision for _, revision in known}) > 1:
        described = ", ".join(f"{path}: {revision}" for path, revision in sorted(known, key=str))
        raise RunsError(f"{task}: the runs ranked different data ({described}); fuse runs of the same data")
    return next((data for _, data in recorded if data), None)
