"""Reading TREC qrels (``topic iteration doc label``) and runs (``topic Q0 doc rank score tag``).

Foundation module: standard library and complexir.errors only. Every error names the file and the line
(:class:`TrecFormatError` carries them as ``path`` and ``line``). A run file's rank column is ignored, as
trec_eval ignores it: order comes from the score, ties by doc id descending (see :func:`complexir.metrics.rank_run`).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Container, Iterator, Mapping

from complexir.errors import UpstreamFormatError

__all__ = ["TrecFormatError", "read_nugget_qrels", "read_qrels", "read_run"]

logger = logging.getLogger(__name__)


class TrecFormatError(UpstreamFormatError):
    """A malformed TREC file: ``path`` and ``line`` (1-based) name where, ``message`` says what.

    An :class:`~complexir.errors.UpstreamFormatError` (so loading scripts let it through as is), but its text
    keeps the compiler-style ``path:line: message`` that ``complexir evaluate`` has always printed.
    """

    def __init__(self, path: str | os.PathLike[str], line: int, message: str):
        super().__init__(path, line, message)
        self.message = message
        self.args = (f"{path}:{line}: {message}",)


def _lines(path: str | os.PathLike[str], fields: int, what: str) -> Iterator[tuple[int, list[str]]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != fields:
                raise TrecFormatError(
                    path, lineno, f"expected {fields} whitespace-separated fields ({what}), "
                                  f"got {len(parts)}: {line.rstrip()!r}"
                )
            yield lineno, parts


def _label(path: str | os.PathLike[str], lineno: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise TrecFormatError(path, lineno, f"label {text!r} is not an integer") from None
    if value < 0:
        raise TrecFormatError(path, lineno, f"label {value} is negative; labels are integers >= 0")
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


def read_nugget_qrels(
    path: str | os.PathLike[str], known: Mapping[str, Container[str]] | None = None
) -> dict[str, dict[str, dict[str, int]]]:
    """topic -> nugget -> doc -> label, the iteration column read as the nugget id (ndeval's format).

    The same (topic, nugget, doc) twice is fine with the same label and an error with two. With ``known``
    (topic -> its nugget ids, e.g. from a nugget list), a judgment of any other nugget is an error at its line.
    """
    out: dict[str, dict[str, dict[str, int]]] = {}
    for lineno, (topic, nugget, doc, label) in _lines(path, 4, "topic nugget doc label"):
        value = _label(path, lineno, label)
        if known is not None and nugget not in known.get(topic, ()):
            raise TrecFormatError(path, lineno, f"topic {topic!r}, nugget {nugget!r} is not in the nuggets file")
        docs = out.setdefault(topic, {}).setdefault(nugget, {})
        if doc in docs and docs[doc] != value:
            raise TrecFormatError(
                path, lineno, f"topic {topic!r}, nugget {nugget!r}, doc {doc!r} judged twice "
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
            raise TrecFormatError(path, lineno, f"score {score!r} is not a number") from None
        if not math.isfinite(value):
            raise TrecFormatError(path, lineno, f"score {score!r} is not finite (topic {topic!r}, doc {doc!r})")
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
