"""The line-by-line TREC readers as they were before the columnar ones (kept verbatim, minus the error class):
the oracle that tests/test_trec_columns.py holds the new readers to. Not used by the package."""

from __future__ import annotations

import math


class PreviousFormatError(ValueError):
    pass


def _lines(path, fields, what):
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != fields:
                raise PreviousFormatError(path, lineno, f"expected {fields} fields ({what})")
            yield lineno, parts


def _label(path, lineno, text):
    try:
        value = int(text)
    except ValueError:
        raise PreviousFormatError(path, lineno, f"label {text!r} is not an integer") from None
    if value < 0:
        raise PreviousFormatError(path, lineno, f"label {value} is negative")
    return value


def read_qrels(path):
    qrels = {}
    for lineno, (topic, _iteration, doc, label) in _lines(path, 4, "topic iteration doc label"):
        value = _label(path, lineno, label)
        docs = qrels.setdefault(topic, {})
        if value > docs.get(doc, -1):
            docs[doc] = value
    return qrels


def read_nugget_qrels(path):
    out = {}
    for lineno, (topic, nugget, doc, label) in _lines(path, 4, "topic nugget doc label"):
        value = _label(path, lineno, label)
        docs = out.setdefault(topic, {}).setdefault(nugget, {})
        if doc in docs and docs[doc] != value:
            raise PreviousFormatError(path, lineno, "judged twice with different labels")
        docs[doc] = value
    return out


def read_run(path):
    run = {}
    for lineno, (topic, _q0, doc, _rank, score, _tag) in _lines(path, 6, "topic Q0 doc rank score tag"):
        try:
            value = float(score)
        except ValueError:
            raise PreviousFormatError(path, lineno, f"score {score!r} is not a number") from None
        if not math.isfinite(value):
            raise PreviousFormatError(path, lineno, f"score {score!r} is not finite")
        docs = run.setdefault(topic, {})
        if doc in docs:
            if value <= docs[doc]:
                continue
        docs[doc] = value
    return run
