"""``complexir fuse``: fuse the rankings of several systems (runs folders, or TREC run files) into one runs folder
that ``complexir run --runs`` scores. Methods and their exact definitions: ``complexir.runs.fusion``."""

from __future__ import annotations

import argparse

from complexir.api.options import FuseOptions
from complexir.cli.argument_types import positive_int
from complexir.runs.fusion import DEFAULT_K, METHODS, FusionMethod


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fuse", help="fuse runs folders (or TREC run files) by RRF, CombSUM or CombMNZ into a runs folder")
    parser.add_argument("runs", nargs="+", metavar="RUNS",
                        help="runs folders (as complexir run --save-runs writes them), or TREC run files; two or more")
    parser.add_argument("--method", choices=METHODS, required=True,
                        help="rrf: reciprocal rank fusion; combsum / combmnz: after min-max normalisation per query")
    parser.add_argument("--k", type=int, default=DEFAULT_K,
                        help="RRF's k: a document scores 1/(k + rank) (default: %(default)s)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="the runs folder to write (a TREC file when the inputs are TREC files)")
    parser.add_argument("--name", default=None,
                        help="the system name written in the runs (default: fusion/<method>, e.g. fusion/rrf-k60)")
    parser.add_argument("--depth", type=positive_int, default=None,
                        help="documents kept per query (default: every document any input ranks)")
    parser.set_defaults(func=fuse)


def fuse(args: argparse.Namespace) -> int:
    from complexir.api.fuse import fuse as fuse_api

    result = fuse_api(FuseOptions(runs=tuple(args.runs), method=FusionMethod(args.method), out=args.out, k=args.k,
                                  name=args.name, depth=args.depth))
    if result.is_file:
        print(f"fused {result.inputs} run files by {result.method} into {result.out} ({result.queries} queries)")
    else:
        print(f"fused {result.inputs} runs folders by {result.method} into {result.out}: {result.run_files} run "
              f"file(s), system {result.name}")
    return 0
