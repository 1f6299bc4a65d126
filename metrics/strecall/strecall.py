"""Subtopic recall StRecall@k (Zhai et al., SIGIR 2003) as an `evaluate` metric, with ndeval's semantics.

The maths lives in complexir.metrics (shared with the CLI and the MTEB tasks); this file only declares
the inputs and forwards them. `complexir push` publishes a copy whose complexir.metrics imports point at a
vendored sibling, _complexir_metrics.py, so the Hub Space needs nothing but requirements.txt.
"""

import datasets
import evaluate

from complexir.metrics import mean_scores
from complexir.metrics.evaluate_inputs import as_cutoffs, coverage_per_input

_CITATION = """\
@inproceedings{zhai2003subtopic,
  title     = {Beyond independent relevance: methods and evaluation metrics for subtopic retrieval},
  author    = {Zhai, ChengXiang and Cohen, William W. and Lafferty, John},
  booktitle = {Proceedings of SIGIR 2003},
  pages     = {10--17},
  year      = {2003}
}
"""

_DESCRIPTION = """\
StRecall@k (subtopic recall) is the share of a query's nuggets (sub-topics, facets) contained in at
least one of the top k documents. The denominator is the number of nuggets with at least one supporting
document (ndeval's "strec"), or with denominator="all" every listed nugget (CRUX's coverage convention).
Values equal ndeval / pyndeval / ir_measures to 1e-12.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): one ranked list of doc ids per query, best first.
    references (`list` of `list` of `dict`): per query, the nugget judgments, each
        `{"doc_id": str, "nugget_id": str, "label": int}`; label >= rel_level means the doc contains the nugget.
        A nugget listed only with label 0 counts in the "all" denominator.
    k (`int` or `list` of `int`, defaults to 20): cutoff(s).
    rel_level (`int`, defaults to 1): minimum label for "contains the nugget".
    denominator (`str`, defaults to "supported"): "supported" or "all".
Returns:
    `dict`: `StRecall@k` for each k, the mean over queries.
Examples:
    >>> m = evaluate.load("metrics/strecall")
    >>> refs = [[{"doc_id": "a", "nugget_id": "1", "label": 1}, {"doc_id": "b", "nugget_id": "2", "label": 1}]]
    >>> m.compute(predictions=[["a", "c"]], references=refs, k=[1, 2])
    {'StRecall@1': 0.5, 'StRecall@2': 0.5}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class StRecall(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.List(datasets.Value("string")),
                    "references": datasets.List(
                        {
                            "doc_id": datasets.Value("string"),
                            "nugget_id": datasets.Value("string"),
                            "label": datasets.Value("int64"),
                        }
                    ),
                }
            ),
            reference_urls=["https://doi.org/10.1145/860435.860440", "https://trec.nist.gov/data/web10.html"],
        )

    def _compute(self, predictions, references, k=20, rel_level=1, denominator="supported"):
        names = [f"StRecall@{c}" for c in as_cutoffs(k, [20])]
        per_query = coverage_per_input(
            predictions,
            references,
            names,
            rel_level=rel_level,
            denominator=denominator,
        )
        return mean_scores(per_query)
