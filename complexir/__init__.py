"""complexir: a Hugging Face-native evaluation suite for CRUMB, IRSC, LoCoV1 and CoverageBench.

The Python API (``complexir.run``, ``complexir.compare``, ``complexir.fuse`` and their option objects) is imported
on first use: mteb's ``.pth`` hook imports this package when any interpreter starts, so importing it stays cheap.
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from complexir.api import (
        CompareOptions,
        FuseOptions,
        FuseResult,
        FusionMethod,
        RunOptions,
        RunResult,
        SearchOptions,
        SystemKind,
        compare,
        fuse,
        run,
    )

__all__ = ["CompareOptions", "FuseOptions", "FuseResult", "FusionMethod", "RunOptions", "RunResult", "SearchOptions",
           "SystemKind", "__version__", "compare", "fuse", "run"]
#: the names ``complexir`` exposes from ``complexir.api``, imported when first asked for
API_NAMES = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read on first use too: scanning the installed distributions costs every start-up
        try:
            version = metadata.version("complexir")
        except metadata.PackageNotFoundError:  # a source checkout that was never installed
            version = "unknown"
        globals()["__version__"] = version
        return version
    if name in API_NAMES:
        from complexir import api

        value = getattr(api, name)
        globals()[name] = value  # once: later lookups find it without this function
        return value
    raise AttributeError(f"module 'complexir' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *API_NAMES, "__version__"})
