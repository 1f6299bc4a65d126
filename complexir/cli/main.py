"""The ``complexir`` console script: one subcommand per module of this package.

Each subcommand module exposes ``add_parser(subparsers)``, which registers its parser and sets
``func`` (a callable taking the parsed args and returning an exit code). Every failure ends as one line and an
exit code (0 success, 2 bad input, 1 other failure, 130 Ctrl-C, 143 SIGTERM; see ``failures``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from importlib import import_module

from complexir.layout.atomic import raise_on_sigterm, restore_sigterm

from .failures import ArgumentParser, report, silence_broken_pipe

# Imported lazily so that `complexir --help` or `complexir evaluate` never pay for torch and mteb.
SUBCOMMANDS = ("run", "build", "evaluate", "validate", "report", "compare", "published", "fuse", "push", "cache",
               "leaderboard")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the command line, only the subcommand it names is imported (each pays for its own
    dependencies only: ``complexir evaluate`` never loads the writer or mteb)."""
    parser = ArgumentParser(prog="complexir", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    parser.add_argument("--debug", action="store_true", help="on an error, print the traceback too")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = next((a for a in (argv or []) if not a.startswith("-")), None)
    for name in [named] if named in SUBCOMMANDS else SUBCOMMANDS:
        # every one is part of the package: a failed import is a broken install
        import_module(f"complexir.cli.{name}_cmd").add_parser(sub)
    _debug_everywhere(parser)
    return parser


def _debug_everywhere(parser: argparse.ArgumentParser) -> None:
    """``--debug`` after the subcommand too (``complexir build crumb ... --debug``), where people type it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                if "--debug" not in child._option_string_actions:
                    child.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                                       help="on an error, print the traceback too")
                _debug_everywhere(child)


def main(argv: list[str] | None = None) -> int:
    # SIGTERM raises like Ctrl-C for the whole command, so that every `with` and `finally` cleans up.
    sigterm_installed = raise_on_sigterm()
    args = None
    try:
        args = _parse(argv)
        if isinstance(args, int):
            return args
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, so that a closed pipe is handled below rather than at interpreter exit
        return code
    except BrokenPipeError:
        return silence_broken_pipe()
    except (Exception, KeyboardInterrupt) as error:
        return report(getattr(args, "command", None), error, debug=bool(getattr(args, "debug", False)))
    finally:
        if sigterm_installed:
            restore_sigterm()


def _parse(argv: list[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code when there is nothing to run."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
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
    return args


if __name__ == "__main__":
    sys.exit(main())
