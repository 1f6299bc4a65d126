"""Seeing and pruning the builds in ``COMPLEXIR_CACHE`` (``complexir cache list|prune|clear``).

The cache is ``complexir.hub.build_cache``'s: one entry per benchmark, upstream commits (and document collections),
complexir version and subsets, each holding its record (``upstream-build.json``). An entry is never deleted while
another process holds its build lock (that process is building it, or about to), and it leaves in one rename: it is
moved to a hidden ``.<subsets>.removing-*`` sibling first, so a reader finds either the whole entry or none, and
then deleted. Unfinished builds (``.partial-*``) and folders a killed removal left (``.removing-*``, ``.old-*``) are
leftovers, which ``prune`` and ``clear`` delete too, under the same lock.

The lock files themselves (``.<subsets>.lock``, empty) are kept: deleting a lock file that another process may be
about to open would let two builds of one entry run at once.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from complexir.hub.build_cache import LAST_USED, cache_root, lock_path
from complexir.hub.provenance import UPSTREAM_BUILD_RECORD, built_from_upstream
from complexir.layout import atomic

REMOVING = "removing"
#: hidden siblings of an entry that are not entries: ``.<entry>.<kind>-<pid>-<hex>`` (``atomic.sibling``)
_LEFTOVER = re.compile(r"^\.(?P<entry>.+)\.(?P<kind>partial|removing|old)-(?P<pid>\d+)-[0-9a-f]+$")


@dataclass
class Entry:
    """One finished build in the cache."""

    path: Path  # the entry folder: <root>/<benchmark folder>/<upstream key>/complexir-<version>/<subsets>
    benchmark: str  # the benchmark's folder name (``crumb``)
    upstream: dict[str, str]  # upstream repo -> commit
    documents: dict[str, str]  # external document collection -> version (CoverageBench)
    complexir: str
    subsets: list[str]  # empty: every subset
    built_at: float
    last_used: float
    size: int  # bytes of its files

    @property
    def built_from(self) -> str:
        return built_from_upstream(self.upstream, self.documents)

    def as_dict(self) -> dict[str, object]:
        return {"benchmark": self.benchmark, "upstream": self.upstream, "documents": self.documents,
                "complexir": self.complexir, "subsets": self.subsets, "built_from": self.built_from,
                "size": self.size, "built_at": self.built_at, "last_used": self.last_used, "path": str(self.path)}


@dataclass
class Leftover:
    """A hidden folder beside an entry that no reader reads: an unfinished build, or a removal cut short."""

    path: Path
    kind: str  # partial, removing or old
    size: int

    @property
    def entry(self) -> Path:
        """The entry it belongs to (whose build lock guards it)."""
        match = _LEFTOVER.match(self.path.name)
        assert match is not None
        return self.path.parent / match["entry"]


@dataclass
class Scan:
    root: Path
    entries: list[Entry] = field(default_factory=list)
    leftovers: list[Leftover] = field(default_factory=list)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)  # entries whose record cannot be read

    @property
    def size(self) -> int:
        return sum(e.size for e in self.entries) + sum(left.size for left in self.leftovers)


def size_on_disk(path: Path) -> int:
    """Bytes of every file under ``path`` (links not followed): what deleting it frees."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:  # deleted meanwhile
                pass
    return total


def _entry_folders(root: Path, benchmarks: Iterable[str] | None) -> Iterator[Path]:
    """Every folder at entry depth (<root>/<benchmark>/<key>/complexir-<version>/<name>), hidden ones too."""
    wanted = None if benchmarks is None else set(benchmarks)
    for bench in sorted(root.iterdir()) if root.is_dir() else ():
        if not bench.is_dir() or (wanted is not None and bench.name not in wanted):
            continue
        for version in sorted(bench.glob("*/complexir-*")):
            if version.is_dir():
                yield from sorted(p for p in version.iterdir() if p.is_dir() and not p.is_symlink())


def scan(root: Path | None = None, benchmarks: Iterable[str] | None = None) -> Scan:
    """The entries and leftovers under ``root`` (default: the cache), of ``benchmarks`` (folder names) only when
    given."""
    import json

    root = cache_root() if root is None else Path(root)
    found = Scan(root)
    for folder in _entry_folders(root, benchmarks):
        match = _LEFTOVER.match(folder.name)
        if match is not None:
            found.leftovers.append(Leftover(folder, match["kind"], size_on_disk(folder)))
            continue
        if folder.name.startswith("."):
            continue
        try:
            record = json.loads((folder / UPSTREAM_BUILD_RECORD).read_text(encoding="utf-8"))
            upstream, built_at = dict(record["upstream"]), float(record["built_at"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            found.unreadable.append((folder, f"{UPSTREAM_BUILD_RECORD}: {error}"))
            continue
        try:
            last_used = (folder / LAST_USED).stat().st_mtime
        except OSError:
            last_used = built_at  # built, never read since
        found.entries.append(Entry(
            folder, folder.relative_to(root).parts[0], upstream, dict(record.get("documents") or {}),
            str(record.get("complexir", "unknown")), list(record.get("subsets") or []), built_at,
            max(last_used, built_at), size_on_disk(folder)))
    return found


def latest(entries: Iterable[Entry]) -> set[Path]:
    """The most recently built entry of each benchmark and set of subsets (across upstream commits and complexir
    versions): what ``--keep-latest`` keeps."""
    newest: dict[tuple[str, tuple[str, ...]], Entry] = {}
    for entry in entries:
        key = (entry.benchmark, tuple(entry.subsets))
        if key not in newest or entry.built_at > newest[key].built_at:
            newest[key] = entry
    return {e.path for e in newest.values()}


def select(found: Scan, *, keep_latest: bool, older_than_days: float | None,
           now: float | None = None) -> list[Entry]:
    """The entries ``prune`` removes: with ``keep_latest``, all but the latest of each benchmark and subsets;
    with ``older_than_days``, those last used longer ago than that; with both, those that are both."""
    if not keep_latest and older_than_days is None:
        raise ValueError("say which builds to prune: --keep-latest, --older-than DAYS, or both "
                         "(`complexir cache clear` removes every build)")
    now = time.time() if now is None else now
    kept = latest(found.entries) if keep_latest else set()
    return [e for e in found.entries if e.path not in kept
            and (older_than_days is None or e.last_used < now - older_than_days * 86400)]


@dataclass
class Removal:
    path: Path
    size: int
    outcome: str  # "removed", "in use" (its build lock is held), "gone" (removed meanwhile) or why not removed


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (another user's counts); this process is not another one."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove(path: Path, size: int, *, dry_run: bool = False) -> Removal:
    """Delete an entry or leftover at ``path``, unless another process holds its build lock (or, for a leftover,
    the process named in it still runs: a removal in progress holds no lock): renamed to a hidden ``.removing-*``
    sibling under the lock (so no reader sees half of it), then deleted."""
    from filelock import FileLock, Timeout

    match = _LEFTOVER.match(path.name)
    if match is not None and _alive(int(match["pid"])):
        return Removal(path, size, "in use")
    entry = path.parent / match["entry"] if match else path
    if dry_run and not lock_path(entry).exists():  # no one has locked it: a dry run writes nothing, not even a lock
        return Removal(path, size, "would remove")
    lock = FileLock(str(lock_path(entry)), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return Removal(path, size, "in use")
    try:
        if not path.exists():
            return Removal(path, size, "gone")
        if dry_run:
            return Removal(path, size, "would remove")
        if match is not None and match["kind"] == REMOVING:
            aside = path  # already out of every reader's way
        else:
            aside = atomic.sibling(entry, REMOVING)
            os.replace(path, aside)  # one rename: readers see the whole entry until here, nothing after
    finally:
        lock.release()
    problem = atomic.remove_tree(aside)
    return Removal(path, size, "removed" if problem is None else f"not deleted ({problem}); it is at {aside}")


def remove_all(targets: Iterable[tuple[Path, int]], *, dry_run: bool = False) -> list[Removal]:
    return [remove(path, size, dry_run=dry_run) for path, size in targets]


def remove_empty_folders(root: Path) -> None:
    """Delete the folders under ``root`` that nothing is left in (lock files count as something)."""
    for folder, _, _ in sorted(os.walk(root), key=lambda walked: -len(walked[0])):
        if Path(folder) != root:
            try:
                os.rmdir(folder)
            except OSError:  # not empty
                pass


# -- how it is shown -----------------------------------------------------------------------------------------------
def format_size(size: int) -> str:
    """``12.3M``: decimal units, as ``hf cache ls`` shows sizes."""
    value = float(size)
    for unit in ("", "K", "M", "G", "T"):
        if abs(value) < 1000 or unit == "T":
            return f"{value:.1f}{unit}"
        value /= 1000
    raise AssertionError("unreachable")


def format_age(timestamp: float, now: float | None = None) -> str:
    """``3 days ago``: written here because huggingface_hub's own helper for this is private."""
    seconds = (time.time() if now is None else now) - timestamp
    if seconds < 60:
        return "just now"
    for unit, length in (("year", 365 * 86400), ("month", 30 * 86400), ("week", 7 * 86400), ("day", 86400),
                         ("hour", 3600), ("minute", 60)):
        if seconds >= length:
            count = int(seconds // length)
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    raise AssertionError("unreachable")


def short_built_from(entry: Entry) -> str:
    """The upstream repos and collections with commits cut to 12 characters, for a table."""
    short = {repo: commit[:12] for repo, commit in entry.upstream.items()}
    documents = {source: version[:12] if source.startswith("hf:") else version
                 for source, version in entry.documents.items()}
    return built_from_upstream(short, documents)
