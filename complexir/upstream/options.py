"""The build flags every loading script shares, declared once: ``--source``, ``--revision``, ``--subset``,
``--no-progress``. ``complexir build`` adds them to each benchmark's parser; a script adds only its own."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any


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
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (ours, datasets' and those of mteb's descriptive statistics)")


#: the switches of the libraries' progress bars, for the libraries (and child processes) not imported yet
_PROGRESS_ENV = ("TQDM_DISABLE", "HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS")


@contextmanager
def progress_bars_off() -> Iterator[None]:
    """No progress bar of any library while the block runs (``--no-progress``): the writer's own take its
    ``progress`` argument, but datasets draws its own ("Generating test split") and mteb's descriptive statistics
    a plain tqdm ("Computing text hashes"). tqdm reads ``TQDM_DISABLE`` only when it is imported, and the build's
    parser has imported it already, so its ``__init__`` is wrapped for the block; everything is restored after."""
    import tqdm.std

    saved_env = {name: os.environ.get(name) for name in _PROGRESS_ENV}
    os.environ.update(dict.fromkeys(_PROGRESS_ENV, "1"))
    original = tqdm.std.tqdm.__dict__["__init__"]
    unbound = tqdm.std.tqdm.__init__

    def quiet_init(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["disable"] = True
        unbound(self, *args, **kwargs)

    tqdm.std.tqdm.__init__ = quiet_init  # type: ignore[method-assign]
    libraries = [module for module in (sys.modules.get("huggingface_hub.utils"), sys.modules.get("datasets"))
                 if module is not None]
    was_disabled = [module.are_progress_bars_disabled() for module in libraries]
    for module in libraries:
        module.disable_progress_bars()
    try:
        yield
    finally:
        tqdm.std.tqdm.__init__ = original
        for module, disabled in zip(libraries, was_disabled, strict=True):
            if not disabled:
                module.enable_progress_bars()
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
