"""Errors raised on bad input. Each names the file (or config), the row or line, and what was expected."""

from __future__ import annotations


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
