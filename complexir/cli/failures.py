"""The CLI's one error policy: every failure ends as one line and a documented exit code.

    complexir <command>: error: <what> (<file>:<line> where known)

Exit codes: 0 success; 2 bad input (arguments, files that are missing or malformed, a folder that may not be
written); 1 anything else (permission denied, disk full, network, Hub); 130 interrupted by Ctrl-C, 143 by
SIGTERM (128 + the signal's number, the shell's convention). A traceback is printed only with ``--debug``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import re
import signal
import sys
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from complexir.layout.errors import Terminated, shorten

OK, FAILED, BAD_INPUT = 0, 1, 2

# OSErrors that mean the user named the wrong thing (rather than: the system refused or failed).
_BAD_INPUT_OS_ERRORS = (FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with its errors in the policy's one-line form (argparse prints the usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(BAD_INPUT, f"{self.prog}: error: {message}{self._did_you_mean(message)} (see {self.prog} --help)\n")

    def _did_you_mean(self, message: str) -> str:
        """`` (did you mean --task?)`` for a mistyped flag or choice (Python 3.11's argparse offers none)."""
        from complexir.cli.argument_types import did_you_mean

        choice = re.match(r"argument .*: invalid choice: '(.*)' \(choose from (.*)\)$", message)
        if choice:
            return did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        unknown = re.match(r"unrecognized arguments: (.*)$", message)
        if unknown:
            flags = [a for a in unknown.group(1).split() if a.startswith("--")]
            hints = [did_you_mean(flag, _option_strings(self)) for flag in flags]
            return "".join(h for h in hints if h)[:1000]
        return ""


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """The long options of ``parser`` and of every subcommand under it."""
    found = {o for o in parser._option_string_actions if o.startswith("--")}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found |= _option_strings(child)
    return found


def _yaml_errors(name: str) -> tuple[type[Exception], ...]:
    """yaml's error class ``name`` if yaml is loaded, else none: an error cannot come from a module that was never
    imported, and importing yaml here would add its start-up time to every command (``evaluate`` has no YAML)."""
    yaml = sys.modules.get("yaml")
    return (getattr(yaml, name),) if yaml is not None else ()


def exit_code(error: BaseException) -> int:
    if isinstance(error, Terminated):
        return 128 + error.signum
    if isinstance(error, KeyboardInterrupt):
        return 128 + signal.SIGINT
    if isinstance(error, (ValueError, *_yaml_errors("YAMLError"), argparse.ArgumentError,
                          argparse.ArgumentTypeError, *_BAD_INPUT_OS_ERRORS)):
        return BAD_INPUT  # ValueError covers the format errors, UnicodeDecodeError and json's errors
    return FAILED


def describe(error: BaseException) -> str:
    """One line naming what failed, and the file and line where known; long quoted values cut (:func:`shorten`)."""
    return shorten(_describe(error))


def _describe(error: BaseException) -> str:
    if isinstance(error, Terminated):
        return str(error)
    if isinstance(error, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(error, UnicodeDecodeError):
        where = _decode_error_location(error.__traceback__)
        text = f"not valid UTF-8 text ({error.reason} at byte {error.object[error.start:error.start + 1]!r})"
        return f"{text} ({where})" if where else text
    mark = getattr(error, "problem_mark", None)
    if isinstance(error, _yaml_errors("MarkedYAMLError")) and mark is not None:
        return f"invalid YAML: {getattr(error, 'problem', None)} ({mark.name}:{mark.line + 1})"
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        target = f" -> {error.filename2}" if error.filename2 is not None else ""
        return f"{error.strerror}: {error.filename}{target}"
    text = " ".join(str(error).split()) or type(error).__name__  # one line, however the message was wrapped
    if exit_code(error) == FAILED and not isinstance(error, OSError):
        return f"{type(error).__name__}: {text} (an unexpected error; --debug shows where)"
    return text


def report(command: str | None, error: BaseException, debug: bool) -> int:
    """Print ``error`` as the policy's one line (with the traceback first under ``debug``); return the exit code."""
    if debug:
        import traceback

        traceback.print_exception(error)
    print(f"complexir{' ' + command if command else ''}: error: {describe(error)}", file=sys.stderr)
    return exit_code(error)


def silence_broken_pipe() -> int:
    """``complexir evaluate ... | head``: the reader left. As Python's documentation on SIGPIPE recommends, point
    stdout at devnull so that the interpreter's final flush does not fail again, and exit 1 without a message."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout already closed or replaced: nothing left to flush
        pass
    return FAILED


def _decode_error_location(tb: TracebackType | None) -> str | None:
    """``file:line`` of the bytes a ``UnicodeDecodeError`` stopped at: the text file open in the innermost frame
    of the traceback, and the first line of it that is not valid UTF-8 (decoding is sequential, so that is
    where the reader failed). Found here once, rather than in every reader of text files."""
    handle = None
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            if isinstance(value, io.TextIOWrapper) and isinstance(getattr(value, "name", None), (str, os.PathLike)):
                handle = value
        tb = tb.tb_next
    if handle is None:
        return None
    path = Path(handle.name)
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as raw:
            for number, line in enumerate(raw, 1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    return f"{path}:{number}"
    except OSError:
        pass
    return str(path)
