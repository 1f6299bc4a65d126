"""Input conversion shared by the `evaluate` modules (metrics/alpha_ndcg, strecall, retrieval).

`evaluate` passes ``predictions`` (one ranked list of doc ids per query) and ``references`` (one list
of judgments per query: ``{"doc_id", "label"}`` plus ``"nugget_id"`` for coverage). Queries are
identified by position. Lives here, not in the module files, so the Hub Spaces and the library share it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["as_cutoffs", "to_judgments", "to_qrels", "to_rankings"]


def _check_lengths(predictions: Sequence, references: Sequence) -> None:
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must have one entry per query: got {len(predictions)} "
            f"predictions and {len(references)} references"
        )


def to_rankings(predictions: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    out = {}
    for i, ranking in enumerate(predictions):
        if isinstance(ranking, str) or not isinstance(ranking, Sequence):
            raise ValueError(f"query {i}: a prediction is a list of doc ids, got {type(ranking).__name__}")
        out[str(i)] = [str(d) for d in ranking]
    return out


def _rows(i: int, judged: object) -> list[Mapping]:
    if isinstance(judged, Mapping):  # datasets may hand a list of dicts over as a dict of lists
        keys = list(judged)
        cols = [judged[k] for k in keys]
        return [dict(zip(keys, vals, strict=True)) for vals in zip(*cols, strict=True)]
    if not isinstance(judged, Sequence):
        raise ValueError(f"query {i}: references are a list of judgments, got {type(judged).__name__}")
    return list(judged)


def _label(i: int, row: Mapping, field: str) -> int:
    lab = row.get(field)
    if isinstance(lab, bool) or not isinstance(lab, (int, float)) or lab < 0 or float(lab) != int(lab):
        raise ValueError(f"query {i}, document {row.get('doc_id')!r}: label {lab!r} is not a non-negative integer")
    return int(lab)


def to_qrels(references: Sequence, predictions: Sequence) -> dict[str, dict[str, int]]:
    """Doc-level qrels; a doc judged several times (e.g. per nugget) keeps its largest label."""
    _check_lengths(predictions, references)
    qrels: dict[str, dict[str, int]] = {}
    for i, judged in enumerate(references):
        docs: dict[str, int] = {}
        for row in _rows(i, judged):
            if "doc_id" not in row:
                raise ValueError(f"query {i}: each judgment needs 'doc_id' and 'label', got {dict(row)!r}")
            doc, lab = str(row["doc_id"]), _label(i, row, "label")
            docs[doc] = max(lab, docs.get(doc, 0))
        qrels[str(i)] = docs
    return qrels


def to_judgments(references: Sequence, predictions: Sequence) -> dict[str, dict[str, dict[str, int]]]:
    """topic -> nugget -> doc -> label from rows with ``doc_id``, ``nugget_id``, ``label``."""
    _check_lengths(predictions, references)
    out: dict[str, dict[str, dict[str, int]]] = {}
    for i, judged in enumerate(references):
        nuggets: dict[str, dict[str, int]] = {}
        for row in _rows(i, judged):
            if "doc_id" not in row or "nugget_id" not in row or row.get("nugget_id") is None:
                raise ValueError(
                    f"query {i}: coverage judgments need 'doc_id', 'nugget_id' and 'label', got {dict(row)!r}"
                )
            docs = nuggets.setdefault(str(row["nugget_id"]), {})
            doc = str(row["doc_id"])
            docs[doc] = max(_label(i, row, "label"), docs.get(doc, 0))
        out[str(i)] = nuggets
    return out


def as_cutoffs(k: int | Sequence[int] | None, default: Sequence[int]) -> list[int]:
    if k is None:
        return list(default)
    ks = [k] if isinstance(k, int) else list(k)
    if not ks or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in ks):
        raise ValueError(f"k must be a positive integer or a list of them, got {k!r}")
    return ks
