"""The ``complexir`` console script: one subcommand per module of this package.

Each subcommand module exposes ``add_parser(subparsers)``, which registers its parser and sets
``func`` (a callable taking the parsed args and returning an exit code). Every failure ends as one line and an
exit code (0 success, 2 bad input, 1 other failure, 130 Ctrl-C, 143 SIGTERM; see ``failures``).
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
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


class _DefaultVerbosity(logging.Filter):
    """What stderr shows: complexir's own progress from INFO, the libraries' records from WARNING (unless ``-v``:
    everything), each record once. Filtering at the handler, not at the loggers' levels, because libraries set
    their own (bm25s puts its logger at DEBUG when imported)."""

    def __init__(self, verbose: bool) -> None:
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if _printed_by_its_library(record.name):
            return False
        if self.verbose:
            return True
        ours = record.name == "complexir" or record.name.startswith("complexir.")
        return record.levelno >= (logging.INFO if ours else logging.WARNING)


def _printed_by_its_library(name: str) -> bool:
    """A record a library's own handler has printed already (huggingface_hub puts a stream handler on its logger):
    printed again by ours, every Hub retry warning appeared twice."""
    logger: logging.Logger | None = logging.getLogger(name)
    while logger is not None and logger is not logging.root:
        if logger.handlers:
            return True
        logger = logger.parent if logger.propagate else None
    return False


def configure_logging(verbose: bool) -> None:
    """One stderr handler on the root logger, filtered by :class:`_DefaultVerbosity`; the libraries' deprecation
    warnings (mteb's ``FutureWarning`` on every dense run) only with ``-v``: they are for developers, not users.
    Like ``logging.basicConfig``, it leaves a root logger that has handlers of someone else's (pytest's) alone."""
    root = logging.getLogger()
    ours = [h for h in root.handlers if getattr(h, "complexir", False)]
    for handler in ours:
        root.removeHandler(handler)
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handler.addFilter(_DefaultVerbosity(verbose))
        handler.complexir = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.getLogger("complexir").setLevel(logging.DEBUG if verbose else logging.INFO)
    if not verbose:
        for category in (FutureWarning, DeprecationWarning):
            warnings.filterwarnings("ignore", category=category, module=r"(?!complexir\b)")


def _parse(argv: list[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code when there is nothing to run."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    if not getattr(args, "func", None):
        if args.command is None:  # bare `complexir`: the main job on its embedded defaults
            args = parser.parse_args(["run", *(argv or [])])
        else:
            parser.print_help()
            return 2
    return args


if __name__ == "__main__":
    sys.exit(main())
