"""Ad hoc retrieval measures (nDCG@k, R@k, AP@k, RR@k, P@k) as an `evaluate` metric, trec_eval semantics.

The maths lives in complexir.metrics (shared with the CLI and the MTEB tasks); this file only declares
the inputs and forwards them. `complexir push` publishes a copy whose complexir.metrics imports point at a
vendored sibling, _complexir_metrics.py, so the Hub Space needs nothing but requirements.txt.
"""

import datasets
import evaluate

from complexir.metrics import mean_scores
from complexir.metrics.evaluate_inputs import adhoc_per_input, as_cutoffs

_CITATION = """\
@misc{trec_eval,
  title        = {trec\\_eval: the TREC evaluation program},
  author       = {{National Institute of Standards and Technology}},
  howpublished = {\\url{https://github.com/usnistgov/trec_eval}}
}
@article{jarvelin2002cumulated,
  title   = {Cumulated gain-based evaluation of IR techniques},
  author  = {J{\\"a}rvelin, Kalervo and Kek{\\"a}l{\\"a}inen, Jaana},
  journal = {ACM Transactions on Information Systems},
  volume  = {20}, number = {4}, pages = {422--446}, year = {2002}
}
"""

_DESCRIPTION = """\
Standard ranked-retrieval measures with trec_eval's semantics: nDCG@k (gain = label, log2(rank + 1)
discount, ideal from the judged labels), R@k (recall), AP@k (trec_eval map_cut_k: sum of precision at
each relevant doc in the top k, divided by all relevant docs), RR@k (reciprocal rank of the first relevant
doc in the top k) and P@k. Averages are over every query; a query without relevant docs scores 0.
Values equal trec_eval / pytrec_eval to 1e-12.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): one ranked list of doc ids per query, best first.
        A repeated doc counts once, at its first rank (a warning reports it).
    references (`list` of `list` of `dict`): per query, the judgments `{"doc_id": str, "label": int}`;
        unjudged docs are non-relevant.
    k (`int` or `list` of `int`, optional): cutoff(s); every measure is computed at each.
        Default: nDCG@10, R@100, AP@10, RR@10, P@10.
    rel_level (`int`, defaults to 1): minimum label for "relevant" (R, AP, RR, P; nDCG uses the labels as gains).
Returns:
    `dict`: keys spelled as ir_measures (`nDCG@10`, `R@100`, ...), means over queries.
Examples:
    >>> m = evaluate.load("metrics/retrieval")
    >>> refs = [[{"doc_id": "a", "label": 1}]]
    >>> m.compute(predictions=[["b", "a"]], references=refs, k=2)
    {'nDCG@2': 0.6309297535714575, 'R@2': 1.0, 'AP@2': 0.5, 'RR@2': 0.5, 'P@2': 0.5}
"""

_DEFAULT = ("nDCG@10", "R@100", "AP@10", "RR@10", "P@10")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Retrieval(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.List(datasets.Value("string")),
                    "references": datasets.List(
                        {"doc_id": datasets.Value("string"), "label": datasets.Value("int64")}
                    ),
                }
            ),
            reference_urls=["https://github.com/usnistgov/trec_eval"],
        )

    def _compute(self, predictions, references, k=None, rel_level=1):
        if k is None:
            names = list(_DEFAULT)
        else:
            names = [f"{fam}@{c}" for c in as_cutoffs(k, []) for fam in ("nDCG", "R", "AP", "RR", "P")]
        # rel_level travels as a measure parameter; output keys keep the plain ir_measures spelling
        plain = rel_level == 1
        asked = {n: n if plain or n.startswith("nDCG") else n.replace("@", f"(rel={rel_level})@") for n in names}
        per_query = adhoc_per_input(predictions, references, list(asked.values()))
        means = mean_scores(per_query)
        return {n: means[asked[n]] for n in names}
