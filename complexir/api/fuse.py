"""``complexir.fuse``: fuse the rankings of several systems (runs folders, or TREC run files) into one runs folder
(or one TREC file) that ``complexir.run(runs=...)`` scores. Methods and their exact definitions:
``complexir.runs.fusion``."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from complexir.api.options import FuseOptions
from complexir.runs.fusion import FusionMethod

if TYPE_CHECKING:
    from complexir.runs.folder import RunsFolder


@dataclass(frozen=True)
class FuseResult:
    """What a fusion wrote: ``out`` (a runs folder, or a TREC file when the inputs were TREC files), the system
    name written in it, the method as described to people, how many inputs were fused and how many run files
    (folders) or queries (one TREC file) it holds."""

    out: Path
    name: str
    method: str
    inputs: int
    run_files: int | None = None  # runs folders: the run files written
    queries: int | None = None  # TREC files: the queries of the fused file

    @property
    def is_file(self) -> bool:
        return self.queries is not None


def fuse(options: FuseOptions | None = None, /, **fields: Any) -> FuseResult:
    """Fuse ``options.runs`` (or ``FuseOptions(**fields)``; fields given with options replace theirs) by
    ``options.method`` into ``options.out``. Raises on bad input, one line naming the file."""
    options = dataclasses.replace(options, **fields) if options is not None else FuseOptions(**fields)
    from complexir.layout.atomic import remove_tree, replace_folder, sibling
    from complexir.runs.folder import RunsError, RunsFolder, RunsFolderWriter, read_run_file, write_run_file
    from complexir.runs.fusion import fuse as fuse_runs

    method_name = FusionMethod(options.method)
    if len(options.runs) < 2:
        raise ValueError("complexir fuse needs two or more runs")
    if method_name == FusionMethod.RRF and options.k < 0:
        raise ValueError(f"--k must be at least 0, got {options.k}")
    inputs = [Path(p).expanduser() for p in options.runs]
    out = Path(options.out).expanduser()
    for path in inputs:
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such runs folder or run file")
        if path.resolve() == out.resolve():
            raise ValueError(f"--out {out} is one of the runs fused")
    rrf = method_name == FusionMethod.RRF
    name = options.name or (f"fusion/rrf-k{options.k}" if rrf else f"fusion/{method_name}")
    method = f"{method_name} (k={options.k})" if rrf else f"{method_name} (min-max)"

    if all(p.is_file() for p in inputs):  # TREC files in, one TREC file out
        if out.exists() or out.is_symlink():
            _check_replaceable_file(out, name)  # refused before any fusion
        runs = [read_run_file(p) for p in inputs]
        fused = fuse_runs(runs, method_name, options.k)
        write_run_file(out, fused, name, options.depth)
        return FuseResult(out.resolve(), name, method, len(inputs), queries=len(fused))
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
    digest = hashlib.sha256(f"{method} {options.depth}".encode())
    for folder in folders:
        digest.update(folder.digest.encode())
    data = {task: _same_data(folders, task) for task in folders[0].tasks()}  # refused before anything is written
    if out.exists() or out.is_symlink():
        _check_replaceable(out, name)  # refused before any fusion
    # Written beside --out and moved into its place once complete: an interrupted fuse leaves no partial folder
    # that a later command would take for a hand-made one, and the previous --out stays as it was until then.
    staging = sibling(out, "tmp")
    try:
        writer = RunsFolderWriter(staging, name, f"fusion-{digest.hexdigest()[:16]}", options.depth)
        for entry in entries:
            runs = [folder.run(*entry) or {} for folder in folders]  # every folder has the entry (checked above)
            fused = fuse_runs(runs, method_name, options.k)
            deepest = max(map(len, fused.values()), default=0) or 1
            depth = min(options.depth, deepest) if options.depth else deepest
            writer.write(*entry, fused, data=data[entry[0]], depth=depth)
        writer.close()
        replace_folder(staging, out, lambda target: _check_replaceable(target, name))
    finally:
        remove_tree(staging)
    return FuseResult(out.resolve(), name, method, len(folders), run_files=len(entries))


def _same_data(folders: list[RunsFolder], task: str) -> dict[str, Any] | None:
    """The data the inputs ranked for ``task``, which must be the same data (as their runs.json record it)."""
    from complexir.runs.folder import RunsError

    recorded = [(f.path, f.data(task)) for f in folders]
    known = {(path, data["revision"]) for path, data in recorded if data}
    if len({revision for _, revision in known}) > 1:
        described = ", ".join(f"{path}: {revision}" for path, revision in sorted(known, key=str))
        raise RunsError(f"{task}: the runs ranked different data ({described}); fuse runs of the same data")
    return next((data for _, data in recorded if data), None)


def _check_replaceable(out: Path, name: str) -> None:
    """``--out`` may be replaced only when it is empty or a runs folder of this fusion (``runs.json`` naming the
    system ``name``, and run files alone): never a hand-made folder, another system's runs, or other files."""
    from complexir.runs.folder import MANIFEST, SUFFIX, RunsError, read_manifest

    if not out.is_dir() or out.is_symlink():
        raise RunsError(f"--out {out}: not a folder; choose a new folder for the fused runs")
    files = [p for p in out.rglob("*") if not p.is_dir()]
    if not files:
        return
    manifest = out / MANIFEST
    if not manifest.is_file():
        raise RunsError(f"--out {out} holds files complexir fuse did not write (it has no {MANIFEST}); choose a new "
                        "folder for the fused runs")
    system = read_manifest(manifest, unfinished_ok=True).get("system")
    if system != name:
        raise RunsError(f"--out {out} holds the runs of {system}, not of {name}; choose a new folder for the fused "
                        "runs")
    other = [p for p in files if p != manifest and not (len(p.relative_to(out).parts) == 3 and p.suffix == SUFFIX)]
    if other:
        raise RunsError(f"--out {out} holds files complexir fuse did not write ({other[0]}); choose a new folder for "
                        "the fused runs")


def _check_replaceable_file(out: Path, name: str) -> None:
    """A TREC ``--out`` may be replaced only when it is a run file this fusion wrote: every line's tag (the sixth
    column) is ``name``, as ``write_run_file`` writes it. Another tool's run, another fusion's or any other file
    is never replaced without a word."""
    from complexir.runs.folder import RunsError

    if not out.is_file() or out.is_symlink():
        raise RunsError(f"--out {out}: not a file; choose a new file for the fused run")
    tag = "_".join(name.split()) or "run"
    with open(out, "rb") as handle:
        for number, line in enumerate(handle, 1):
            fields = line.split()
            if fields and (len(fields) != 6 or fields[5].decode("utf-8", "replace") != tag):
                raise RunsError(f"--out {out}:{number}: not a run of {name} (this fusion's tag); complexir fuse "
                                "replaces only its own output: choose a new file for the fused run")
