"""Reading TREC qrels (``topic iteration doc label``) and runs (``topic Q0 doc rank score tag``).

Foundation module: standard library only (plus complexir.metrics by contract). Every error names the
file and the line. A run file's rank column is ignored, as trec_eval ignores it: order comes from the
score, ties by doc id descending (see :func:`complexir.metrics.rank_run`).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterator

__all__ = ["TrecFormatError", "read_nugget_qrels", "read_qrels", "read_run"]

logger = logging.getLogger(__name__)


class TrecFormatError(ValueError):
    """A malformed TREC file; the message starts with ``path:line:``."""


def _lines(path: str | os.PathLike[str], fields: int, what: str) -> Iterator[tuple[int, list[str]]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != fields:
                raise TrecFormatError(
                    f"{path}:{lineno}: expected {fields} whitespace-separated fields ({what}), "
                    f"got {len(parts)}: {line.rstrip()!r}"
                )
            yield lineno, parts


def _label(path: str | os.PathLike[str], lineno: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise TrecFormatError(f"{path}:{lineno}: label {text!r} is not an integer") from None
    if value < 0:
        raise TrecFormatError(f"{path}:{lineno}: label {value} is negative; labels are integers >= 0")
    return value


def read_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """topic -> doc -> label. A doc listed twice for a topic (e.g. under two nuggets) keeps its largest label."""
    qrels: dict[str, dict[str, int]] = {}
    for lineno, (topic, _iteration, doc, label) in _lines(path, 4, "topic iteration doc label"):
        value = _label(path, lineno, label)
        docs = qrels.setdefault(topic, {})
        if value > docs.get(doc, -1):
            docs[doc] = value
    return qrels


def read_nugget_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, dict[str, int]]]:
    """topic -> nugget -> doc -> label, the iteration column read as the nugget id (ndeval's format)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for lineno, (topic, nugget, doc, label) in _lines(path, 4, "topic nugget doc label"):
        value = _label(path, lineno, label)
        docs = out.setdefault(topic, {}).setdefault(nugget, {})
        if doc in docs and docs[doc] != value:
            raise TrecFormatError(
                f"{path}:{lineno}: topic {topic!r}, nugget {nugget!r}, doc {doc!r} judged twice "
                f"with different labels ({docs[doc]} and {value})"
            )
        docs[doc] = value
    return out


def read_run(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """topic -> doc -> score. A doc repeated within a topic keeps its best score and is reported."""
    run: dict[str, dict[str, float]] = {}
    repeats = 0
    for lineno, (topic, _q0, doc, _rank, score, _tag) in _lines(path, 6, "topic Q0 doc rank score tag"):
        try:
            value = float(score)
        except ValueError:
            raise TrecFormatError(f"{path}:{lineno}: score {score!r} is not a number") from None
        if not math.isfinite(value):
            raise TrecFormatError(f"{path}:{lineno}: score {score!r} is not finite (topic {topic!r}, doc {doc!r})")
        docs = run.setdefault(topic, {})
        if doc in docs:
            repeats += 1
            if value <= docs[doc]:
                continue
        docs[doc] = value
    if repeats:
        logger.warning(
            "%s: %d repeated (topic, doc) line(s); each doc counts once, at its best score", path, repeats
        )
    return run
