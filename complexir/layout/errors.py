"""Errors raised on bad input. Each names the file (or config), the row or line, and what was expected."""

from __future__ import annotations

import re


class LayoutError(ValueError):
    """A benchmark folder, or rows written into one, break the standard layout."""


class UpstreamFormatError(ValueError):
    """An upstream release file does not have the format its loading script expects."""

    def __init__(self, path: object, line: int | None, message: str):
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


class OutputFolderError(ValueError):
    """``--out`` is a folder a build must not write or replace (an input, or a folder the builder did not make)."""


class LeftoverError(OSError):
    """A step succeeded but left a file or folder behind that could not be deleted; the message names it."""

    def __init__(self, path: object, message: str):
        super().__init__(message)
        self.path = path

    def __str__(self) -> str:
        return self.args[0]


class Terminated(KeyboardInterrupt):
    """SIGTERM (or another terminating signal), raised like Ctrl-C so that clean-up code runs."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    def __str__(self) -> str:
        import signal

        return f"terminated by {signal.Signals(self.signum).name}"


class HubAccessError(OSError):
    """The Hub refused a request or could not be reached; the message is one line naming the repo and what to do.

    An ``OSError``: like a refused permission or a full disk, the system failed rather than the input (exit 1)."""


#: a quoted value (an id, a line, bytes) longer than this is cut to its start in an error line
QUOTED_KEPT = 80
#: an error line longer than this keeps its start (the file and line) and its end (what to do)
LINE_KEPT = 1000
_LONG = QUOTED_KEPT * 2
_QUOTED = re.compile(f"'[^'\\n]{{{_LONG},}}'|\"[^\"\\n]{{{_LONG},}}\"")


def _cut_quoted(match: re.Match[str]) -> str:
    quoted = match.group(0)
    return f"{quoted[:QUOTED_KEPT + 1]}...{quoted[-1]} ({len(quoted) - 2:,} characters)"


def shorten(text: str) -> str:
    """``text`` with each long quoted value cut to its start, and, if still longer than :data:`LINE_KEPT`, its
    middle left out: an error line stays readable however large the input it quotes (binary garbage, a huge id)."""
    text = _QUOTED.sub(_cut_quoted, text)
    if len(text) > LINE_KEPT:
        head, tail = LINE_KEPT * 3 // 4, LINE_KEPT // 4
        text = f"{text[:head]} ... ({len(text) - head - tail:,} characters left out) ... {text[-tail:]}"
    return text
