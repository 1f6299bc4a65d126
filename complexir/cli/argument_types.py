"""Argument types the subcommands share (argparse's ``type=``): one wording for one kind of bad value."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """A whole number of at least 1 (a batch size, a depth, a count)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def unknown_names(kind: str, given: list[str], known: list[str] | set[str] | dict[str, object]) -> str:
    """The error for names that are none of ``known``: each with its closest known name (``did you mean``, difflib,
    letter case ignored), then every known name."""
    import difflib

    by_folded = {name.casefold(): name for name in sorted(known)}
    shown = []
    for name in given:
        close = difflib.get_close_matches(name.casefold(), list(by_folded), n=1, cutoff=0.6)
        shown.append(f"{name!r}" + (f" (did you mean {by_folded[close[0]]}?)" if close else ""))
    return f"unknown {kind}{'s' if len(given) > 1 else ''} {', '.join(shown)}; known: {', '.join(sorted(known))}"
