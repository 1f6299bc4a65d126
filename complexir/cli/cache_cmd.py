"""``complexir cache list|prune|clear``: the benchmarks built from their upstream releases in ``$COMPLEXIR_CACHE``
(``complexir.hub.build_cache``), listed with what each was built from, its size and when it was last read, and deleted
when no longer wanted (never while another process holds an entry's build lock)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from complexir.cli.text_table import text_table
from complexir.hub import cache_admin
from complexir.layout.errors import LeftoverError


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {text!r}") from None
    if not days >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a number of days >= 0, got {text!r}")
    return days


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cache", help="list and prune the benchmarks built from upstream releases ($COMPLEXIR_CACHE)",
        description=__doc__.splitlines()[0].replace("``", "`"))
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION", required=True)

    def common(action: argparse.ArgumentParser) -> None:
        action.add_argument("--benchmark", action="append", metavar="NAME",
                            help="only this benchmark's builds (repeatable; e.g. CRUMB or crumb)")
        action.add_argument("--cache-dir", type=Path, default=None,
                            help="the cache to read (default: $COMPLEXIR_CACHE, else complexir/ in the Hugging Face "
                                 "home)")

    listing = actions.add_parser("list", aliases=["ls"], help="every build: what it was built from, its size, when "
                                                               "it was built and last read")
    common(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object per build, full commits")
    listing.set_defaults(func=run_list)

    prune = actions.add_parser("prune", help="delete old builds (and unfinished ones): --keep-latest, --older-than")
    common(prune)
    prune.add_argument("--keep-latest", action="store_true",
                       help="delete every build but the most recent one of each benchmark and subsets")
    prune.add_argument("--older-than", type=_days, metavar="DAYS",
                       help="delete builds not read for more than DAYS days (with --keep-latest: only those the "
                            "latest-rule would delete)")
    prune.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")
    prune.set_defaults(func=run_prune)

    clear = actions.add_parser("clear", help="delete every build (except those being built now)")
    common(clear)
    clear.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")
    clear.set_defaults(func=run_clear)


def _benchmarks(names: list[str] | None) -> list[str] | None:
    """Folder names of the benchmarks named (a registered one by its name or folder, any other as given)."""
    if names is None:
        return None
    from complexir.registry.benchmarks import get_spec

    folders = []
    for name in names:
        try:
            folders.append(get_spec(name).folder)
        except KeyError:
            folders.append(name)  # a benchmark no longer registered may still have builds
    return folders


def _scan(args: argparse.Namespace) -> cache_admin.Scan:
    return cache_admin.scan(args.cache_dir, _benchmarks(args.benchmark))


def run_list(args: argparse.Namespace) -> int:
    found = _scan(args)
    if args.json:
        print(json.dumps({"root": str(found.root), "builds": [e.as_dict() for e in found.entries],
                          "leftovers": [{"path": str(left.path), "kind": left.kind, "size": left.size}
                                        for left in found.leftovers],
                          "unreadable": [{"path": str(path), "problem": problem}
                                         for path, problem in found.unreadable]}, indent=1))
        return 0
    if not found.entries and not found.leftovers:
        print(f"no builds in {found.root}")
        return 0
    now = time.time()
    rows = [[e.benchmark, cache_admin.short_built_from(e), e.complexir, ", ".join(e.subsets) or "all",
             cache_admin.format_size(e.size), cache_admin.format_age(e.built_at, now),
             cache_admin.format_age(e.last_used, now), str(e.path)] for e in found.entries]
    if rows:
        print(text_table(["BENCHMARK", "BUILT FROM", "COMPLEXIR", "SUBSETS", "SIZE", "BUILT", "LAST USED", "PATH"],
                         rows))
    print(f"\n{len(found.entries)} build(s), {cache_admin.format_size(found.size)} on disk, in {found.root}")
    if found.leftovers:
        size = cache_admin.format_size(sum(left.size for left in found.leftovers))
        print(f"{len(found.leftovers)} unfinished build(s) or removal(s) cut short ({size}): "
              "`complexir cache prune --keep-latest` deletes them")
    for path, problem in found.unreadable:
        print(f"not a readable build, left alone: {path} ({problem})")
    return 0


def _remove(found: cache_admin.Scan, chosen: list[cache_admin.Entry], dry_run: bool) -> int:
    targets = [(e.path, e.size) for e in chosen] + [(left.path, left.size) for left in found.leftovers]
    removals = cache_admin.remove_all(targets, dry_run=dry_run)
    labels = {e.path: f"{e.benchmark} ({', '.join(e.subsets) or 'all'}) built from {e.built_from}" for e in chosen}
    for left in found.leftovers:
        labels[left.path] = {"partial": "unfinished build", "removing": "removal cut short",
                             "old": "replaced build"}[left.kind]
    for r in removals:
        print(f"{r.outcome}: {labels[r.path]}, {cache_admin.format_size(r.size)}: {r.path}")
    if not dry_run:
        cache_admin.remove_empty_folders(found.root)
    done = [r for r in removals if r.outcome in ("removed", "would remove")]
    freed = cache_admin.format_size(sum(r.size for r in done))
    print(f"{'would delete' if dry_run else 'deleted'} {len(done)} folder(s) in {found.root}, "
          f"{'would free' if dry_run else 'freed'} {freed}" if targets else f"nothing to delete in {found.root}")
    in_use = [r for r in removals if r.outcome == "in use"]
    if in_use:
        print(f"{len(in_use)} kept: another process holds its build lock (it is being built)")
    failed = [r for r in removals if r.outcome.startswith("not deleted")]
    if failed:
        raise LeftoverError(failed[0].path, f"{len(failed)} build(s) could not be deleted, first "
                                            f"{failed[0].path}: {failed[0].outcome}")
    return 0


def run_prune(args: argparse.Namespace) -> int:
    found = _scan(args)
    chosen = cache_admin.select(found, keep_latest=args.keep_latest, older_than_days=args.older_than)
    return _remove(found, chosen, args.dry_run)


def run_clear(args: argparse.Namespace) -> int:
    found = _scan(args)
    return _remove(found, list(found.entries), args.dry_run)
