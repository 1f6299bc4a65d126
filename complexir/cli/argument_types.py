"""Argument types the subcommands share (argparse's ``type=``): one wording for one kind of bad value."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable


def positive_int(text: str) -> int:
    """A whole number of at least 1 (a batch size, a depth, a count)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the known name closest to ``name`` (difflib, letter case ignored); empty when none
    is close. One wording for every command's names, flags and choices."""
    by_folded = {k.casefold(): k for k in sorted(known)}
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=1, cutoff=0.6)
    return f" (did you mean {by_folded[close[0]]!r}?)" if close else ""
