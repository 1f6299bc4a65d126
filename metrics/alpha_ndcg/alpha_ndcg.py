"""alpha-nDCG@k (Clarke et al., SIGIR 2008) as an `evaluate` metric, with ndeval's semantics.

The maths lives in complexir.metrics (shared with the CLI and the MTEB tasks); this file only declares
the inputs and forwards them. `complexir push` publishes a copy whose complexir.metrics imports point at a
vendored sibling, _complexir_metrics.py, so the Hub Space needs nothing but requirements.txt.
"""

import datasets
import evaluate

from complexir.metrics import mean_scores
from complexir.metrics.evaluate_inputs import as_cutoffs, coverage_per_input

_CITATION = """\
@inproceedings{clarke2008novelty,
  title     = {Novelty and diversity in information retrieval evaluation},
  author    = {Clarke, Charles L. A. and Kolla, Maheedhar and Cormack, Gordon V. and Vechtomova, Olga
               and Ashkan, Azin and B{\\"u}ttcher, Stefan and MacKinnon, Ian},
  booktitle = {Proceedings of SIGIR 2008},
  pages     = {659--666},
  year      = {2008}
}
"""

_DESCRIPTION = """\
alpha-nDCG@k rewards rankings that cover many nuggets (sub-topics, facets) early and penalises
redundancy: a document's gain for a nugget shrinks by a factor (1 - alpha) for every document above it
that already contained that nugget. The ideal ranking is built greedily over the judged pool (ties to the
larger doc id), exactly as the TREC ndeval tool does; because the greedy ideal is not optimal, values
slightly above 1 are possible. Values equal ndeval / pyndeval / ir_measures to 1e-12.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): one ranked list of doc ids per query, best first.
        A repeated doc counts once, at its first rank (a warning reports it).
    references (`list` of `list` of `dict`): per query, the nugget judgments, each
        `{"doc_id": str, "nugget_id": str, "label": int}`; label >= rel_level means the doc contains the nugget.
    k (`int` or `list` of `int`, defaults to 20): cutoff(s).
    alpha (`float`, defaults to 0.5): redundancy penalty, in [0, 1].
    rel_level (`int`, defaults to 1): minimum label for "contains the nugget" (grades are binarised).
Returns:
    `dict`: `alpha_nDCG@k` for each k, the mean over queries (a query without any supporting
    document scores 0).
Examples:
    >>> m = evaluate.load("metrics/alpha_ndcg")
    >>> refs = [[{"doc_id": "a", "nugget_id": "1", "label": 1}, {"doc_id": "b", "nugget_id": "2", "label": 1}]]
    >>> m.compute(predictions=[["a", "b"]], references=refs, k=5)
    {'alpha_nDCG@5': 1.0}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AlphaNDCG(evaluate.Metric):
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
            reference_urls=["https://trec.nist.gov/data/web10.html", "https://doi.org/10.1145/1390334.1390446"],
        )

    def _compute(self, predictions, references, k=20, alpha=0.5, rel_level=1):
        names = [f"alpha_nDCG@{c}" for c in as_cutoffs(k, [20])]
        per_query = coverage_per_input(predictions, references, names, alpha=alpha, rel_level=rel_level)
        return mean_scores(per_query)
