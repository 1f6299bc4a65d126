"""What every loading script's ``build`` takes, typed (:class:`BuildOptions`, extended by a script with options of
its own), and the build flags every loading script shares, declared once: ``--source``, ``--revision``,
``--subset``, ``--no-progress``. ``complexir build`` adds them to each benchmark's parser (a script adds only its
own) and turns the parsed flags into the script's options (:meth:`BuildOptions.from_flags`); the build cache makes
the options directly (``complexir.hub.build_cache``).

A loading script exposes ``add_arguments(parser)``, ``build(options) -> int`` and, when it takes more than
:class:`BuildOptions`, ``OPTIONS``: its subclass of it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self


@dataclass(frozen=True)
class BuildOptions:
    """One build of a benchmark folder from its upstream release."""

    out: str | Path  # the benchmark folder to write (atomically)
    source: str | None = None  # the release: a Hub id or a local folder (None: the script's default release)
    revision: str | None = None  # Hub revision of the source
    subsets: tuple[str, ...] | None = None  # build only these (None: every one the release holds)
    overwrite: bool = False  # replace ``out`` if it exists
    progress: bool = True  # progress bars
    #: run on the finished folder before it is put in place (``complexir build`` writes mteb's descriptive
    #: statistics there): the script hands it to its ``BenchmarkWriter``
    before_swap: Callable[[Path], object] | None = dataclasses.field(default=None, compare=False)

    #: fields named otherwise on the command line: field -> (flag's dest, conversion)
    FLAG_NAMES: ClassVar[dict[str, tuple[str, Callable[[Any], Any]]]] = {
        "subsets": ("subset", lambda v: tuple(v) if v is not None else None),
                  "progress": ("no_progress", lambda v: not v)}

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> Self:
        """The options of ``complexir build``'s parsed flags (dest -> value): each field from the flag of its name
        (``subsets`` from ``--subset``, ``progress`` from ``--no-progress``); flags a script does not declare
        keep the field's default."""
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            dest, convert = cls.FLAG_NAMES.get(field.name, (field.name, None))
            if dest in flags:
                values[field.name] = convert(flags[dest]) if convert else flags[dest]
        return cls(**values)

    def subset_list(self) -> list[str] | None:
        """The subsets asked for as a list, None for every one."""
        return list(self.subsets) if self.subsets is not None else None

    def source_or(self, default: str) -> str:
        """The source given, else the script's ``default`` release."""
        return self.source if self.source is not None else default


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
        tqdm.std.tqdm.__init__ = original  # type: ignore[method-assign]
        for module, disabled in zip(libraries, was_disabled, strict=True):
            if not disabled:
                module.enable_progress_bars()
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
