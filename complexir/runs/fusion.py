"""Rank fusion of runs (``complexir fuse``): reciprocal rank fusion, CombSUM and CombMNZ.

Definitions (those of ranx's ``fuse``, which the tests compare with):
- **RRF** (Cormack et al., 2009): a document scores ``sum over runs of 1 / (k + rank)``, ranks from 1, each run's
  documents ranked by score, ties by document id descending (trec_eval's order; ranx leaves ties in an unspecified
  order, so on tied scores RRF may differ from ranx's). A run that does not rank the document adds nothing.
- **CombSUM** (Fox and Shaw, 1993): the sum of the document's min-max normalised scores, ``(s - min) / max(max -
  min, 1e-9)`` over each run's documents of that query (ranx's floor on the denominator: a query whose documents all
  score the same normalises to 0 for all of them, and a range below 1e-9 is divided by 1e-9). A run that does not
  rank the document adds 0.
- **CombMNZ**: CombSUM times the number of runs that rank the document.

Unlike ranx, runs need not hold the same queries: a query is fused over the runs that rank it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the runs folder module loads pyarrow: the method names stay cheap for the command line
    from complexir.runs.folder import Results


class FusionMethod(StrEnum):
    """The fusion methods (a ``StrEnum``: each is the string the command line and the runs name it by)."""

    RRF = "rrf"
    COMBSUM = "combsum"
    COMBMNZ = "combmnz"


METHODS = tuple(FusionMethod)
DEFAULT_K = 60
#: ranx's min-max normalisation never divides by less than this
MIN_RANGE = 1e-9


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """One query's scores min-max normalised as ranx does (see the module docstring)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = max(high - low, MIN_RANGE)
    return {doc: (score - low) / span for doc, score in scores.items()}


def reciprocal_ranks(scores: Mapping[str, float], k: int) -> dict[str, float]:
    """``1 / (k + rank)`` of each document of one query, ranks from 1, ties by document id descending."""
    from complexir.runs.folder import ranked

    return {doc: 1 / (k + rank) for rank, (doc, _) in enumerate(ranked(scores), 1)}


def max_rrf_k(depth: int, runs: int) -> int:
    """The largest RRF ``k`` at which ``1 / (k + rank)``, summed over ``runs`` runs, still tells the ranks 1 ..
    ``depth`` apart in float64: adjacent ranks differ by ``1 / (k + rank)`` relative, which must stay above the
    rounding of a sum of ``runs`` terms (``runs`` units in the last place, 2**-52 each). Beyond it every document
    ties and the fusion is document-id order."""
    return 2**52 // max(runs, 1) - depth - 1


def fuse(runs: Sequence[Mapping[str, Mapping[str, float]]], method: FusionMethod | str, k: int = DEFAULT_K) -> Results:
    """The fusion of ``runs`` (each ``qid -> docid -> score``) by ``method`` (one of :data:`METHODS`)."""
    if method not in METHODS:
        raise ValueError(f"unknown fusion method {method!r}; choose one of {', '.join(METHODS)}")
    if method == "rrf" and k < 0:
        raise ValueError(f"RRF's k must be at least 0, got {k}")
    if method == "rrf":
        depth = max((len(docs) for run in runs for docs in run.values()), default=0)
        if k > max_rrf_k(depth, len(runs)):
            raise ValueError(f"RRF's k (--k) {k} is too large: for rankings of up to {depth} documents fused over "
                             f"{len(runs)} runs, 1/(k + rank) no longer tells the ranks apart in floating point, and "
                             f"the fusion would be document-id order; use k <= {max_rrf_k(depth, len(runs))}")
    queries = sorted({qid for run in runs for qid in run})
    out: Results = {}
    for qid in queries:
        parts = [run[qid] for run in runs if qid in run]
        if method == "rrf":
            parts = [reciprocal_ranks(p, k) for p in parts]
        else:
            parts = [min_max(p) for p in parts]
        fused: dict[str, float] = {}
        counts: dict[str, int] = {}
        for part in parts:  # summed run by run, in the order given (as ranx sums)
            for doc, score in part.items():
                fused[doc] = fused.get(doc, 0.0) + score
                counts[doc] = counts.get(doc, 0) + 1
        if method == "combmnz":
            fused = {doc: score * counts[doc] for doc, score in fused.items()}
        out[qid] = fused
    return out
