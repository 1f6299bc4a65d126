"""complexir.metrics — the maths, once: ranking, trec_eval-style ad hoc and ndeval-style coverage measures.

Ground floor of the package: imports numpy and the standard library only; evaluate_inputs (the `evaluate` modules'
inputs, not imported here) also pyarrow, which the modules' Spaces have through datasets.
"""

from .adhoc import DEFAULT_ADHOC_MEASURES, adhoc_per_query, mean_scores
from .coverage import DEFAULT_COVERAGE_MEASURES, coverage_per_query
from .measures import Measure, max_depth, parse_measure
from .ranking import rank_run

__all__ = [
    "DEFAULT_ADHOC_MEASURES",
    "DEFAULT_COVERAGE_MEASURES",
    "Measure",
    "adhoc_per_query",
    "coverage_per_query",
    "max_depth",
    "mean_scores",
    "parse_measure",
    "rank_run",
]
