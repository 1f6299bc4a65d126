"""``complexir leaderboard``: a static leaderboard site (a Space ``complexir push`` publishes) from result folders
and, with ``--hub``, from the Hub's leaderboards of the benchmark repos."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help="build a leaderboard site (a static Space) from result folders and/or the Hub: views "
                            "per benchmark and task, a measure switch, ranks with significance ties, published rows")
    parser.add_argument("results", nargs="*", metavar="RESULTS",
                        help="result folders of `complexir run` (at least two systems in all; each folder may hold "
                             "several); its numbers are `complexir compare`'s")
    parser.add_argument("--out", required=True, metavar="SITE", help="the site's folder (a static Space)")
    parser.add_argument("--hub", action="store_true",
                        help="add each benchmark repo's leaderboard on the Hub (its ranks and values, numbers only) "
                             "and the ranked models' per-task .eval_results")
    parser.add_argument("--allow-demo", action="store_true",
                        help="accept results of demo data (or of data no result names); every such row says DEMO")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from complexir.analysis.leaderboard import make_leaderboard

    path = make_leaderboard(args.results, args.out, hub=args.hub, allow_demo=args.allow_demo)
    print(f"leaderboard written to {path} (with leaderboard.json and .csv); publish it with "
          f"`complexir push {args.out} --repo ORG/NAME`")
    return 0
