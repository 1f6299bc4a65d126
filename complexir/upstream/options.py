"""The build flags every loading script shares, declared once: ``--source``, ``--revision``, ``--subset``,
``--no-progress``. ``complexir build`` adds them to each benchmark's parser; a script adds only its own."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_build_arguments(parser: argparse.ArgumentParser, *, default_source: str | None, source_help: str,
                        subsets: Sequence[str], only_known_subsets: bool = True,
                        subset_help: str = "build only these subsets") -> None:
    """Add the common build flags to one benchmark's parser.

    ``default_source`` None makes ``--source`` required (a benchmark with no public release to default to).
    ``subsets`` are the benchmark's subset names, shown in the help and, with ``only_known_subsets``, the only
    accepted values (a release may hold subsets no one listed: those benchmarks pass False).
    """
    if default_source is None:
        parser.add_argument("--source", required=True, help=source_help)
    else:
        parser.add_argument("--source", default=default_source, help=f"{source_help} (default: %(default)s)")
    parser.add_argument("--revision", default=None,
                        help="Hub revision (branch, tag or commit) of --source")
    parser.add_argument("--subset", nargs="+", default=None, metavar="SUBSET",
                        choices=list(subsets) if only_known_subsets else None,
                        help=f"{subset_help} (default: every one the release holds): {', '.join(subsets)}")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
