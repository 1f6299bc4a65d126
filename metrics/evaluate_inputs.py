"""Input conversion shared by the `evaluate` modules (metrics/alpha_ndcg, strecall, retrieval).

`evaluate` passes ``predictions`` (one ranked list of doc ids per query) and ``references`` (one list
of judgments per query: ``{"doc_id", "label"}`` plus ``"nugget_id"`` for coverage; datasets may hand a query's
list of dicts over as a dict of lists). Queries are identified by position. Lives here, not in the module files,
so the Hub Spaces and the library share it.

Two ways to the same numbers. :func:`adhoc_per_input` and :func:`coverage_per_input` take the columnar one: the
lists become Arrow columns in pyarrow's C code (no dict built in Python per query or judgment), doc ids become
integer codes, and the numpy core takes them as it takes a TREC file's columns (``complexir evaluate``). The dict path
(:func:`to_rankings`, :func:`to_qrels`, :func:`to_judgments`, then ``adhoc_per_query`` / ``coverage_per_query``)
takes whatever the columnar one does not fit (another container or type, a missing field, a None where a judgment
needs a value, a label that is not a non-negative integer or is a bool) and is the one that names the offending
query and document.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .adhoc import adhoc_per_query, adhoc_scores_of_codes
from .coverage import (
    coverage_per_query,
    coverage_scores,
    judged_in_id_order,
    nugget_judgments,
    parse_coverage_measures,
)
from .measures import max_depth
from .ranking import rank_codes

__all__ = ["adhoc_per_input", "as_cutoffs", "coverage_per_input", "to_judgments", "to_qrels", "to_rankings"]

logger = logging.getLogger(__name__)


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


# The columnar path takes lists of lists, judgment dicts and int or float labels; anything else goes the dict path,
# which decides as it always has (it refuses a bool label, a tuple as a judgment, a string as a ranking). pyarrow
# alone would be laxer: it reads "ab" as the ranking ["a", "b"], a tuple as a judgment, True as the label 1.
# Differences that stay, on purpose: a bytes doc id is read as UTF-8 text (the dict path made b"a" the id "b'a'"),
# and a numpy integer label is a label (the dict path refused it).


@dataclass
class _Columns:
    """The inputs as arrays: ranked docs as listed (repeats too) and judgments, doc ids as shared integer codes."""

    ranked_topic: np.ndarray  # query index of each ranked doc, query after query, in list order
    ranked_doc: np.ndarray
    judged_topic: np.ndarray
    judged_doc: np.ndarray
    judged_label: np.ndarray  # int64, checked non-negative
    judged_nugget: np.ndarray | None  # integer codes, with nuggets only
    ids: pa.Array  # doc code -> doc id

    def order(self, codes: np.ndarray) -> np.ndarray:
        """Integers ordered as the ids of the distinct ``codes`` are (UTF-8 byte order: code point order, as
        Python's)."""
        rank = np.empty(len(codes), np.int64)
        rank[pc.sort_indices(self.ids.take(pa.array(codes))).to_numpy()] = np.arange(len(codes))
        return rank


def _ranking_column(predictions: Sequence) -> pa.ListArray | None:
    if type(predictions) is not list or not set(map(type, predictions)) <= {list, tuple}:
        return None
    return pa.array(predictions, type=pa.list_(pa.string()))


def _labels(values: list) -> np.ndarray | None:
    """The labels as numbers, or None unless every one is a non-negative integer given as an int or a float: pyarrow
    infers int64 or double from such lists, and refuses (or infers another type from) bools, strings and None."""
    labels = pa.array(values)
    if len(labels) == 0:
        return np.zeros(0, np.int64)
    if labels.type not in (pa.int64(), pa.float64()) or labels.null_count:
        return None
    out = labels.to_numpy()
    if not (np.isfinite(out).all() and out.min() >= 0 and (out % 1 == 0).all()):
        return None
    return out.astype(np.int64)


def _judgment_fields(references: Sequence, ids: list[str]) -> tuple[np.ndarray, list[pa.Array], np.ndarray] | None:
    """Query index of each judgment, one string array per id field (null where missing or None) and the labels;
    None when the references do not fit."""
    if type(references) is not list:
        return None
    kinds = set(map(type, references))
    try:
        if kinds <= {list}:  # one list of judgment dicts per query
            # itemgetter also refuses a judgment that is not a dict (TypeError) or has no label (KeyError)
            labels = _labels(list(map(itemgetter("label"), chain.from_iterable(references))))
            if labels is None:
                return None
            judged = pa.array(references, type=pa.list_(pa.struct([(f, pa.string()) for f in ids])))
            flat = judged.flatten()
            return judged.value_parent_indices().to_numpy(), [flat.field(f) for f in ids], labels
        if kinds <= {dict}:  # a dict of lists per query, with exactly the fields (the dict path zips every key)
            if set(map(len, references)) - {len(ids) + 1}:
                return None
            columns = [list(map(itemgetter(f), references)) for f in [*ids, "label"]]
            if not set(map(type, chain.from_iterable(columns))) <= {list}:
                return None
            labels = _labels(list(chain.from_iterable(columns[-1])))
            if labels is None:
                return None
            lists = [pa.array(c, type=pa.list_(pa.string())) for c in columns[:-1]]
            lengths = pa.array(list(map(len, columns[-1])), pa.int32())
            if any(not lengths.equals(c.value_lengths()) for c in lists):
                return None  # the dict path's zip refuses lists of different lengths
            return lists[0].value_parent_indices().to_numpy(), [c.flatten() for c in lists], labels
    except (KeyError, TypeError, OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):  # see the callers' docstrings
        return None
    return None


def _columns(predictions: Sequence, references: Sequence, nuggets: bool) -> _Columns | None:
    """The inputs as :class:`_Columns`, or None where the columnar path does not fit (see the module docstring)."""
    judged = _judgment_fields(references, ["doc_id", "nugget_id"] if nuggets else ["doc_id"])
    if judged is None:
        return None
    judged_topic, (doc, *nugget), labels = judged
    if doc.null_count or (nugget and nugget[0].null_count):  # a field missing, or None (the dict path tells which)
        return None
    try:
        ranked = _ranking_column(predictions)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        ranked = None
    if ranked is None:
        return None
    ranked_docs = ranked.flatten()
    # One code per distinct id (queries share them; the keys the core builds add the query). A None in a ranking is
    # the id "None", as str(None) made it.
    encoded = pc.dictionary_encode(pa.concat_arrays([pc.fill_null(ranked_docs, "None"), doc]))
    codes = encoded.indices.to_numpy().astype(np.int64)
    return _Columns(
        ranked_topic=ranked.value_parent_indices().to_numpy(),
        ranked_doc=codes[: len(ranked_docs)],
        judged_topic=judged_topic,
        judged_doc=codes[len(ranked_docs) :],
        judged_label=labels,
        judged_nugget=pc.dictionary_encode(nugget[0]).indices.to_numpy().astype(np.int64) if nugget else None,
        ids=encoded.dictionary,
    )


def _ranked(columns: _Columns, nq: int, depth: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(query index, doc code) of each ranked doc once, at its first rank, cut at ``depth``; repeats reported."""
    topic = columns.ranked_topic
    # List order is the ranking: a score falling along the lists, never tied, ranks them as they are.
    rows, repeated = rank_codes(topic, columns.ranked_doc, -np.arange(len(topic), dtype=np.float64), depth)
    if repeated.any():
        # count the repeats above the last rank read (all of them where a query has fewer distinct docs)
        kept_topic = topic[rows]
        cut = np.full(nq, len(topic))
        if depth is not None:
            last = np.flatnonzero(np.append(kept_topic[1:] != kept_topic[:-1], True))
            full = np.bincount(kept_topic, minlength=nq)[kept_topic[last]] >= depth
            cut[kept_topic[last][full]] = rows[last][full]
        counted = repeated & (np.arange(len(topic)) < cut[topic])
        if counted.any():
            queries = np.unique(topic[counted])
            logger.warning(
                "%d duplicate document(s) in the rankings of %d query(ies) (e.g. %s); each counts once, "
                "at its first (best) rank",
                int(counted.sum()), len(queries), ", ".join(repr(str(q)) for q in queries[:5].tolist()),
            )
    return topic[rows], columns.ranked_doc[rows]


def adhoc_per_input(
    predictions: Sequence, references: Sequence, measures: Sequence[str]
) -> dict[str, dict[str, float]]:
    """:func:`~complexir.metrics.adhoc_per_query` of the modules' inputs (queries "0", "1", ... by position); a doc
    judged several times (e.g. per nugget) keeps its largest label."""
    _check_lengths(predictions, references)
    columns = _columns(predictions, references, nuggets=False)
    if columns is None:  # the dict path, for inputs the columnar one does not fit; it names a bad query
        return adhoc_per_query(to_qrels(references, predictions), to_rankings(predictions), measures)
    qids = [str(i) for i in range(len(predictions))]
    topic, doc = _ranked(columns, len(qids), max_depth(measures))
    values = adhoc_scores_of_codes(topic, doc, columns.judged_topic, columns.judged_doc, columns.judged_label,
                                   measures, qids)
    return {name: dict(zip(qids, vec.tolist(), strict=True)) for name, vec in values.items()}


def coverage_per_input(
    predictions: Sequence,
    references: Sequence,
    measures: Sequence[str],
    *,
    alpha: float = 0.5,
    rel_level: int = 1,
    denominator: str = "supported",
) -> dict[str, dict[str, float]]:
    """:func:`~complexir.metrics.coverage_per_query` of the modules' inputs (queries "0", "1", ... by position)."""
    options: dict[str, Any] = dict(alpha=alpha, rel_level=rel_level, denominator=denominator)
    _check_lengths(predictions, references)
    columns = _columns(predictions, references, nuggets=True)
    if columns is None:  # the dict path, for inputs the columnar one does not fit; it names a bad query
        return coverage_per_query(to_judgments(references, predictions), to_rankings(predictions), measures,
                                  **options)
    parsed = parse_coverage_measures(measures, **options)
    qids = [str(i) for i in range(len(predictions))]
    topic, doc = _ranked(columns, len(qids), max_depth(parsed))
    ranked_docs, judged_docs = judged_in_id_order(doc, columns.judged_doc, columns.order)
    assert columns.judged_nugget is not None  # asked for with nuggets=True
    jd = nugget_judgments(columns.judged_topic, columns.judged_nugget, judged_docs, columns.judged_label, len(qids))
    values = coverage_scores(jd, ranked_docs, np.bincount(topic, minlength=len(qids)), parsed, qids, **options)
    return {name: dict(zip(qids, vec.tolist(), strict=True)) for name, vec in values.items()}
