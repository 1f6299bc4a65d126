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
