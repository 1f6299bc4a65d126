"""The ``complexir`` console script: one subcommand per module of this package.

Each subcommand module exposes ``add_parser(subparsers)``, which registers its parser and sets
``func`` (a callable taking the parsed args and returning an exit code).
"""

from __future__ import annotations

import argparse
import logging
import sys
from importlib import import_module

# Imported lazily so that `complexir --help` or `complexir evaluate` never pay for torch and mteb.
SUBCOMMANDS = ("run", "build", "evaluate", "validate", "report", "push")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="complexir", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:  # every one is part of the package: a failed import is a broken install
        import_module(f"complexir.cli.{name}_cmd").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Our own progress at INFO; the libraries' chatter (mteb logs every loading step) only with -v.
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("complexir").setLevel(logging.DEBUG if args.verbose else logging.INFO)
    if not getattr(args, "func", None):
        if args.command is None:  # bare `complexir`: the main job on its embedded defaults
            args = parser.parse_args(["run", *(argv or [])])
        else:
            parser.print_help()
            return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        logging.getLogger("complexir").debug("error", exc_info=True)
        print(f"complexir {args.command}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
