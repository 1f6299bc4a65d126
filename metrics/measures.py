"""Measure-name parsing, in ir_measures' spelling (``nDCG@10``, ``alpha_nDCG(alpha=0.9)@20``).

Names are parsed once into :class:`Measure` records so that the maths never sees a string and an
unknown or malformed name fails early with a message that lists what is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["ADHOC_MEASURES", "COVERAGE_MEASURES", "Measure", "max_depth", "parse_measure"]

# family -> (cutoff: "required" | "optional" | "none", allowed parameters)
ADHOC_MEASURES: dict[str, tuple[str, frozenset[str]]] = {
    "nDCG": ("optional", frozenset()),
    "R": ("optional", frozenset({"rel"})),
    "AP": ("optional", frozenset({"rel"})),
    "RR": ("optional", frozenset({"rel"})),
    "P": ("required", frozenset({"rel"})),
}
COVERAGE_MEASURES: dict[str, tuple[str, frozenset[str]]] = {
    "alpha_nDCG": ("required", frozenset({"alpha", "rel"})),
    "alpha_DCG": ("required", frozenset({"alpha", "rel"})),
    "StRecall": ("required", frozenset({"rel"})),
    "ERR_IA": ("required", frozenset({"alpha", "rel"})),
    "nERR_IA": ("required", frozenset({"alpha", "rel"})),
    "P_IA": ("required", frozenset({"rel"})),
    "AP_IA": ("none", frozenset({"rel"})),
    "NRBP": ("none", frozenset({"alpha", "beta", "rel"})),
    "nNRBP": ("none", frozenset({"alpha", "beta", "rel"})),
}
_ALIASES = {"α_nDCG": "alpha_nDCG", "α_DCG": "alpha_DCG"}
_NAME_RE = re.compile(r"^(?P<family>[A-Za-zα_]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[0-9]+))?$")


@dataclass(frozen=True)
class Measure:
    """A parsed measure: ``name`` is the spelling used as output key (whitespace removed)."""

    name: str
    family: str
    kind: str  # "adhoc" or "coverage"
    cutoff: int | None
    params: dict[str, float] = field(default_factory=dict, hash=False)


def _accepted() -> str:
    return ", ".join([*ADHOC_MEASURES, *COVERAGE_MEASURES])


def parse_measure(name: str) -> Measure:
    """Parse an ir_measures-style name; ValueError naming the problem on anything else."""
    if not isinstance(name, str):
        raise TypeError(f"measure names are strings, got {name!r}")
    text = "".join(name.split())
    m = _NAME_RE.match(text)
    if not m:
        raise ValueError(f"malformed measure name {name!r}; expected e.g. 'nDCG@10' or 'alpha_nDCG(alpha=0.9)@20'")
    family = _ALIASES.get(m["family"], m["family"])
    if family in ADHOC_MEASURES:
        kind, (cutoff_rule, allowed) = "adhoc", ADHOC_MEASURES[family]
    elif family in COVERAGE_MEASURES:
        kind, (cutoff_rule, allowed) = "coverage", COVERAGE_MEASURES[family]
    else:
        raise ValueError(f"unknown measure {name!r}; known measures: {_accepted()}")
    cutoff = int(m["cutoff"]) if m["cutoff"] is not None else None
    if cutoff_rule == "required" and cutoff is None:
        raise ValueError(f"measure {name!r} needs a cutoff, e.g. '{family}@20'")
    if cutoff_rule == "none" and cutoff is not None:
        raise ValueError(f"measure {name!r} takes no cutoff (it uses the whole ranking)")
    if cutoff is not None and cutoff < 1:
        raise ValueError(f"measure {name!r}: the cutoff must be >= 1")
    params: dict[str, float] = {}
    if m["params"]:
        for item in m["params"].split(","):
            key, sep, value = item.partition("=")
            if not sep or key not in allowed:
                raise ValueError(
                    f"measure {name!r}: unsupported parameter {item!r}; {family} accepts "
                    f"{sorted(allowed) or 'no parameters'}"
                )
            try:
                params[key] = int(value) if key == "rel" else float(value)
            except ValueError:
                raise ValueError(f"measure {name!r}: parameter {key} must be a number, got {value!r}") from None
    return Measure(name=text, family=family, kind=kind, cutoff=cutoff, params=params)


def max_depth(measures: Iterable[str | Measure]) -> int | None:
    """How much of each ranking the measures read: the largest cutoff, or None (the whole ranking) when
    any measure has no cutoff (``AP``, ``nDCG``, ``AP_IA``, ``NRBP``, ...). Pass it to ``rank_run(run, depth=...)``.
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    cutoffs = [(m if isinstance(m, Measure) else parse_measure(m)).cutoff for m in measures]
    if not cutoffs or any(c is None for c in cutoffs):
        return None
    return max(cutoffs)
