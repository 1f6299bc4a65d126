"""The integrity rules of the standard layout, each written once, for the writer and the validator alike.

A rule here is about rows taken together: an id appears once, a judgment names a query of its split, a
document is listed once in a nugget's support, a ranked list names documents of the corpus, every query of a
split has a positive judgment, judgments on documents the corpus lacks are counted (and, in a folder, match the
card's count). Whether one value has the right type is the caller's business (the writer checks Python rows,
the validator checks parquet schemas); both then feed rows here, one at a time, with the ``Place`` they came
from, so that a broken rule reads the same whichever side found it::

    <file or table>, row <n>: <what is wrong> (first at <where the other row is>)

The writer's places are the rows handed to it (``subset 'drugs', split 'test', qrels, row 3``, counted from
1 in the order given); the validator's are the rows of a parquet file (``…/qrels-test.parquet, row 3``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Generic, TypeVar

from .errors import LayoutError

K = TypeVar("K", bound=Hashable)

MAX_GRADE = 2**31 - 1  # the layout's score columns are int32


@dataclass(frozen=True, slots=True)
class Place:
    """Where a row is: ``table`` names a file (or the table of a split being written), ``row`` counts from 1.
    ``name`` is the short form used when a message in another table points back here (a file's base name)."""

    table: str
    row: int
    name: str = ""

    def __str__(self) -> str:
        return f"{self.table}, row {self.row}"

    def seen_from(self, other: Place) -> str:
        """This place as a message about ``other`` names it: the row alone within one table."""
        if other.table == self.table:
            return f"row {self.row}"
        return f"{self.name or self.table}, row {self.row}"


class UniqueKeys(Generic[K]):
    """Rule: a key appears once (a query id in its split; a judgment (query, document); a nugget (query,
    nugget id); a query's ranked list). Keeps the first place of each key, in the order keys arrived."""

    def __init__(self, describe: Callable[[K], str]):
        self._describe = describe
        self.first: dict[K, Place] = {}

    def add(self, key: K, place: Place) -> None:
        first = self.first.get(key)
        if first is not None:
            raise LayoutError(f"{place}: duplicate {self._describe(key)} (first at {first.seen_from(place)})")
        self.first[key] = place

    def __contains__(self, key: object) -> bool:
        return key in self.first

    def __len__(self) -> int:
        return len(self.first)


def duplicate_document(doc_id: str, place: Place, first: Place) -> LayoutError:
    """The duplicate-id rule's message for the corpus, whose first places are found only when needed."""
    return LayoutError(f"{place}: duplicate document id {doc_id!r} (first at {first.seen_from(place)})")


class DocumentIds:
    """Rule: a document id appears once in its subset's corpus; and the membership test the split rules use.

    Only the ids are kept (a corpus can be large); the first place of a duplicate is looked up with ``locate``,
    which the owner provides (it rereads what was written or read so far)."""

    def __init__(self, locate: Callable[[str], Place]):
        self._ids: set[str] = set()
        self._locate = locate

    def add(self, doc_id: str, place: Place) -> None:
        if doc_id in self._ids:
            raise duplicate_document(doc_id, place, self._locate(doc_id))
        self._ids.add(doc_id)

    def missing(self, doc_ids: Iterable[str]) -> set[str]:
        """Those of ``doc_ids`` that are not in the corpus."""
        return {doc_id for doc_id in doc_ids if doc_id not in self._ids}

    def __len__(self) -> int:
        return len(self._ids)


def check_grade(value: Any, what: str) -> int:
    """Rule: a relevance grade is an integer from 0 to ``MAX_GRADE`` (the score column's range)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise LayoutError(f"{what}: expected an integer grade, got {type(value).__name__} {value!r:.60}")
    if value < 0:
        raise LayoutError(f"{what}: expected a grade >= 0, got {value}")
    if value > MAX_GRADE:
        raise LayoutError(f"{what}: grade {value} is larger than the layout's int32 score column holds ({MAX_GRADE})")
    return int(value)


@dataclass(frozen=True, slots=True)
class MissingDocument:
    """A judgment (a qrels row or one nugget support entry) on a document the corpus lacks."""

    place: Place
    query_id: str
    doc_id: str


class SplitIntegrity:
    """The rules of one split, fed its rows in order: queries first, then qrels, nuggets and ranked lists.

    ``documents`` answers which ids the corpus lacks; it is asked once, in ``missing_documents``, for every id
    the split names, so that a corpus kept outside memory is read once per split."""

    def __init__(self, subset: str, documents: DocumentIds):
        self.subset = subset
        self.documents = documents
        self.queries: UniqueKeys[str] = UniqueKeys(lambda qid: f"query id {qid!r}")
        self.judgments: UniqueKeys[tuple[str, str]] = UniqueKeys(
            lambda key: f"judgment for query {key[0]!r} and document {key[1]!r}")
        self.nuggets: UniqueKeys[tuple[str, str]] = UniqueKeys(lambda key: f"nugget {key[1]!r} for query {key[0]!r}")
        self.ranked: UniqueKeys[str] = UniqueKeys(lambda qid: f"query-id {qid!r}")
        self.positive: set[str] = set()  # queries with a judgment of grade > 0
        self.judged: set[str] = set()
        self._support: list[tuple[Place, str, str]] = []  # (nugget row, query id, document id)
        self._ranked_docs: list[tuple[Place, Sequence[str]]] = []

    def _check_query(self, qid: str, place: Place) -> None:
        # Rule: qrels, nuggets and ranked lists name a query of their split.
        if qid not in self.queries:
            raise LayoutError(f"{place}: query-id {qid!r} is not a query of this split")

    def query(self, qid: str, place: Place) -> None:
        self.queries.add(qid, place)

    def judgment(self, qid: str, doc_id: str, score: int, place: Place) -> None:
        self._check_query(qid, place)
        self.judgments.add((qid, doc_id), place)
        self.judged.add(qid)
        if score > 0:
            self.positive.add(qid)

    def nugget(self, qid: str, nugget_id: str, support: Sequence[str], place: Place) -> None:
        """``support``: the document ids of the nugget's support, in order."""
        self._check_query(qid, place)
        self.nuggets.add((qid, nugget_id), place)
        # Two grades for one document: a reader keeps one of them silently, so refuse it.
        first: dict[str, int] = {}
        for j, doc_id in enumerate(support, 1):
            if doc_id in first:
                raise LayoutError(f"{place}, support {j}: document {doc_id!r} twice in the support of nugget "
                                  f"{nugget_id!r} (first at support {first[doc_id]})")
            first[doc_id] = j
            self._support.append((place, qid, doc_id))

    def ranked_list(self, qid: str, doc_ids: Sequence[str], place: Place) -> None:
        self._check_query(qid, place)
        self.ranked.add(qid, place)
        self._ranked_docs.append((place, doc_ids))

    def without_positive(self) -> list[str]:
        """Queries with no positive judgment, in query order (the writer drops them, a folder may not hold any)."""
        return [qid for qid in self.queries.first if qid not in self.positive]

    def require_positive(self, place: object) -> None:
        """Rule: every query of a folder's split has a positive judgment (the writer has dropped the others)."""
        missing = self.without_positive()
        if missing:
            raise LayoutError(f"{place}: {len(missing)} queries have no positive qrel, e.g. {sorted(missing)[:3]}")

    def missing_documents(self) -> tuple[list[MissingDocument], list[MissingDocument]]:
        """(qrels rows, nugget support entries) on documents the corpus lacks, in row order; a ranked list naming
        such a document is an error.

        Rule: a judgment on a document the corpus lacks is kept, because trec_eval and ndeval count that document
        as relevant and never retrieved (recall's denominator, the ideal DCG); it is counted, and a folder's card
        must declare how many (``check_declared_missing``). A ranked list is a run's input, so it must be
        retrievable."""
        named = {doc_id for _, doc_id in self.judgments.first}
        named.update(doc_id for _, _, doc_id in self._support)
        for _, doc_ids in self._ranked_docs:
            named.update(doc_ids)
        missing = self.documents.missing(named)
        for place, doc_ids in self._ranked_docs:
            for doc_id in doc_ids:
                if doc_id in missing:
                    raise LayoutError(f"{place}: corpus-id {doc_id!r} is not in the corpus of subset {self.subset!r}")
        qrels = [MissingDocument(place, qid, doc_id) for (qid, doc_id), place in self.judgments.first.items()
                 if doc_id in missing]
        support = [MissingDocument(place, qid, doc_id) for place, qid, doc_id in self._support if doc_id in missing]
        return qrels, support


def check_declared_missing(found: list[MissingDocument], declared: int, kind: str, subset: str, split: str,
                           place: object) -> None:
    """Rule: a folder holds exactly as many judgments on missing documents as its card declares for the split
    (``kind``: "qrels" or "nugget support"). Too many names the first undeclared row; too few names ``place``."""
    if len(found) == declared:
        return
    if len(found) > declared:
        first = found[declared]
        raise LayoutError(f"{first.place}: {kind} corpus-id {first.doc_id!r} is not in the corpus of subset "
                          f"{subset!r}, and the card declares {declared} such judgment(s) for split {split!r} "
                          f"({len(found)} found)")
    raise LayoutError(f"{place}: the card declares {declared} {kind} judgment(s) on documents missing from the "
                      f"corpus, {len(found)} found")


def count_by_query(found: Iterable[MissingDocument], keep: Mapping[str, Any] | set[str]) -> int:
    """How many of ``found`` belong to the queries in ``keep``."""
    return sum(1 for entry in found if entry.query_id in keep)
