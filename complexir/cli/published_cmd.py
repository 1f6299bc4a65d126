"""``complexir published [BENCHMARK]``: the numbers the benchmarks' papers published, with their citations."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "published", help="print the results the benchmarks' papers published (reference numbers, with citations)")
    parser.add_argument("benchmark", nargs="?", default=None,
                        help="CRUMB, IRSC, LoCoV1 or CoverageBench (default: all of them)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from complexir.analysis import published

    names = [args.benchmark] if args.benchmark else published.benchmarks()
    print("\n\n".join(published.render(published.load(name)) for name in names))
    return 0
