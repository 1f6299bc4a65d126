"""``complexir validate DIR``: check a benchmark folder against the standard layout."""

from __future__ import annotations

import argparse
import json
import sys

from complexir.layout.validation import validate_folder


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("validate", help="check that a folder is a valid benchmark in the standard layout")
    parser.add_argument("folder", help="a benchmark folder (e.g. one written by `complexir build`)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    report = validate_folder(args.folder)
    print(json.dumps(report, indent=2))
    # the verdict on stderr, so that stdout stays the JSON of the counts (a problem never gets here: it is an error)
    print(f"OK: {args.folder} is a valid benchmark folder in the standard layout ({len(report)} subset(s))",
          file=sys.stderr)
    return 0
