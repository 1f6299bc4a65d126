"""``complexir compare``: many systems side by side, with 95% intervals and Holm-corrected paired tests."""

from __future__ import annotations

import argparse
import logging

from complexir.api.options import CompareOptions
from complexir.api.run import check_folder_option
from complexir.cli.early_checks import check_existing_folders

logger = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare systems' results: means with 95%% intervals, paired tests with Holm's correction, "
                        "Judged@10 and the papers' published numbers (compare.md/.tex/.json and charts)")
    parser.add_argument("results", nargs="+", metavar="RESULTS",
                        help="result folders of `complexir run` / `mteb run` (each may hold several systems)")
    parser.add_argument("--baseline", default=None, metavar="NAME",
                        help="test every system against this one only (a folder given, a model name or a letter); "
                             "default: every pair")
    parser.add_argument("--measure", action="append", default=None, metavar="M",
                        help="a measure to compare, in any spelling a command prints: nDCG@10, MAP@10 or AP@10, "
                             "ndcg_at_10 (repeatable; default: each "
                             "benchmark's headline and official measures)")
    parser.add_argument("--allow-demo", action="store_true",
                        help="accept results of demo data (or of data no result names) and label them as demo")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_existing_folders("results folder", args.results)  # before the comparison's imports, which take seconds
    check_folder_option("--out", args.out)
    logger.info("loading mteb and the results...")  # seconds of imports: say the command is alive
    from complexir.api.compare import compare

    path = compare(CompareOptions(results=tuple(args.results), out=args.out, baseline=args.baseline,
                                  measures=tuple(args.measure) if args.measure else None, allow_demo=args.allow_demo,
                                  progress=not args.no_progress))
    print(f"comparison written to {path} (and compare.json, compare.tex, charts)")
    return 0
