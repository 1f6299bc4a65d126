"""``complexir run``'s runs options: ``--runs`` scores fixed rankings as a system, ``--save-runs`` writes the
rankings a run made (``complexir.api.fixed_runs`` does both; ``complexir.runs.folder`` describes the folder
layout)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the runs folder module loads pyarrow: not for `complexir --help`
    from complexir.api.fixed_runs import SavedRuns
    from complexir.runs.folder import FixedRunsSearch


def add_runs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", default=None, metavar="PATH",
                        help="score fixed rankings instead of a model: a runs folder (<Task>/<subset>/<split>.trec, "
                             "as --save-runs writes it) or one TREC run file with exactly one --task and --split; "
                             "needs --model-name")
    parser.add_argument("--save-runs", nargs="?", const="", default=None, metavar="DIR",
                        help="write every task's ranking (each subset and split, at the search depth) as TREC run "
                             "files in a runs folder (default: <output>/runs/<model>/<revision>/)")
    parser.add_argument("--allow-other-data", action="store_true",
                        help="with --runs or a --first-stage of runs: use a runs folder whose runs.json says its "
                             "rankings were made on other data (another build or revision) than the data scored; "
                             "refused without it")


def print_saved_runs(saved: SavedRuns | None) -> None:
    if saved is not None:
        print(f"runs: {saved.files} run file(s) in {saved.path} (depth {saved.depth})")


def print_runs_summary(search: FixedRunsSearch | None) -> None:
    """What the fixed runs were, and how many queries each run left unranked (they score 0, as trec_eval -c)."""
    if search is None:
        return
    print(f"system: {search.folder.describe()}")
    for (task, subset, split), (searched, absent) in sorted(search.missing.items()):
        if absent:
            print(f"not in run: {task} {subset} {split}: {absent} of {searched} queries (scored 0, as trec_eval -c)")
    if search.missing and not any(absent for _, absent in search.missing.values()):
        print("not in run: none (every query searched is ranked)")
