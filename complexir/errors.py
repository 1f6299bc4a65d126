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
