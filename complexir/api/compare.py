"""``complexir.compare``: many systems side by side, with 95% intervals and Holm-corrected paired tests
(``complexir.analysis.compare`` writes compare.md, compare.json, compare.tex and the charts)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from complexir.api.options import CompareOptions


def compare(options: CompareOptions | None = None, /, **fields: Any) -> Path:
    """Compare the systems of ``options.results`` (or ``CompareOptions(**fields)``; fields given with options replace
    theirs) into ``options.out``; returns the path of compare.md."""
    options = dataclasses.replace(options, **fields) if options is not None else CompareOptions(**fields)
    from complexir.analysis.compare import make_compare

    return Path(make_compare([str(path) for path in options.results], str(options.out), baseline=options.baseline,
                             measures=list(options.measures) if options.measures else None,
                             allow_demo=options.allow_demo, progress=options.progress))
