"""The measure registry and measure-name parsing (``nDCG@10``, ``alpha_nDCG(alpha=0.9)@20``).

Every measure family is declared once in :data:`FAMILIES`: its ir_measures name, whether it is ad hoc
(trec_eval) or coverage (ndeval), its cutoff rule and parameters, the stem of its MTEB score key
(``alpha_nDCG@20`` ↔ ``alpha_ndcg_at_20``) and of its table label (``α-nDCG@20``). The CLI help, the `run`
table, per-query keys and report labels all derive from it, so a new measure is one line here plus its maths.

Names are parsed once into :class:`Measure` records so that the maths never sees a string and an
unknown or malformed name fails early with a message that lists what is accepted. :func:`parse_measure` is the one
parser every command uses, and it reads every spelling a command prints: ir_measures' (``AP@10``, what ``evaluate``
prints), the table label (``MAP@10``, ``α-nDCG@20``: ``run``, ``compare``, ``report``), the MTEB score key
(``map_at_10``: result JSON, ``compare.json``) and the reference tool's name where it differs (ndeval's ``MAP-IA``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "FAMILIES",
    "CutoffRule",
    "Family",
    "Measure",
    "MeasureKind",
    "from_mteb_key",
    "max_depth",
    "measure_label",
    "measures_help",
    "parse_measure",
]


class MeasureKind(StrEnum):
    """Which semantics a measure has: ``adhoc`` (trec_eval's, one relevance per document) or ``coverage``
    (ndeval's, nuggets)."""

    ADHOC = "adhoc"
    COVERAGE = "coverage"


class CutoffRule(StrEnum):
    """Whether a family's name takes ``@k``: always (``required``), may (``optional``) or never (``none``: it reads
    the whole ranking)."""

    REQUIRED = "required"
    OPTIONAL = "optional"
    NONE = "none"


ADHOC, COVERAGE = MeasureKind.ADHOC, MeasureKind.COVERAGE
REQUIRED, OPTIONAL, NO_CUTOFF = CutoffRule.REQUIRED, CutoffRule.OPTIONAL, CutoffRule.NONE


@dataclass(frozen=True)
class Family:
    """One measure family: how it is spelt in ir_measures, MTEB score keys and tables, and what it accepts."""

    name: str  # ir_measures spelling, e.g. "nDCG"
    kind: MeasureKind
    cutoff: CutoffRule
    params: frozenset[str]
    mteb: str  # MTEB score-key stem: "ndcg" -> "ndcg_at_10"
    label: str  # table label stem: "nDCG" -> "nDCG@10"
    trec_eval: str | None = None  # the reference tool's name for it (trec_eval measure or ndeval column)


FAMILIES: tuple[Family, ...] = (
    Family("nDCG", ADHOC, OPTIONAL, frozenset(), "ndcg", "nDCG", "ndcg_cut"),
    Family("R", ADHOC, OPTIONAL, frozenset({"rel"}), "recall", "R", "recall"),
    Family("AP", ADHOC, OPTIONAL, frozenset({"rel"}), "map", "MAP", "map_cut"),
    Family("RR", ADHOC, OPTIONAL, frozenset({"rel"}), "mrr", "MRR", "recip_rank"),
    Family("P", ADHOC, REQUIRED, frozenset({"rel"}), "precision", "P", "P"),
    # ir_measures' judgment rate (its "judged" provider; trec_eval has none): the fraction of the top k with any
    # judgment, over min(k, ranking length)
    Family("Judged", ADHOC, OPTIONAL, frozenset(), "judged", "Judged", None),
    Family("alpha_nDCG", COVERAGE, REQUIRED, frozenset({"alpha", "rel"}), "alpha_ndcg", "α-nDCG", "alpha-nDCG"),
    Family("alpha_DCG", COVERAGE, REQUIRED, frozenset({"alpha", "rel"}), "alpha_dcg", "α-DCG", "alpha-DCG"),
    Family("StRecall", COVERAGE, REQUIRED, frozenset({"rel"}), "strecall", "StRecall", "strec"),
    Family("ERR_IA", COVERAGE, REQUIRED, frozenset({"alpha", "rel"}), "err_ia", "ERR-IA", "ERR-IA"),
    Family("nERR_IA", COVERAGE, REQUIRED, frozenset({"alpha", "rel"}), "nerr_ia", "nERR-IA", "nERR-IA"),
    Family("P_IA", COVERAGE, REQUIRED, frozenset({"rel"}), "p_ia", "P-IA", "P-IA"),
    Family("AP_IA", COVERAGE, NO_CUTOFF, frozenset({"rel"}), "ap_ia", "AP-IA", "MAP-IA"),
    Family("NRBP", COVERAGE, NO_CUTOFF, frozenset({"alpha", "beta", "rel"}), "nrbp", "NRBP", "NRBP"),
    Family("nNRBP", COVERAGE, NO_CUTOFF, frozenset({"alpha", "beta", "rel"}), "nnrbp", "nNRBP", "nNRBP"),
)
_BY_NAME = {f.name: f for f in FAMILIES}
_BY_MTEB = {f.mteb: f for f in FAMILIES}

def _spellings() -> dict[str, Family]:
    """Every spelling of a family's name before its parameters and cutoff: ir_measures', the table label's, ndeval's
    column (a spelling two families shared would be ambiguous: refused at import). MTEB score keys are read whole,
    by :func:`from_mteb_key`."""
    found: dict[str, Family] = {}
    for f in FAMILIES:
        names = [f.name, f.label, f.name.replace("alpha_", "α_"), f.label.replace("α-", "alpha-")]
        if f.trec_eval and f.kind == "coverage":  # ndeval's column names (trec_eval's, e.g. ndcg_cut, are not ours)
            names.append(f.trec_eval)
        for spelling in names:
            if found.setdefault(spelling, f) is not f:
                raise AssertionError(f"measure spelling {spelling!r} names both {found[spelling].name} and {f.name}")
    return found


_SPELLINGS = _spellings()
_NAME_RE = re.compile(r"^(?P<family>[A-Za-zα_-]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[0-9]+))?$")
# MTEB key: stem, then optional "_<param>_<value>" pairs, then optional "_at_<k>" (e.g. alpha_ndcg_alpha_0.9_at_20)
_MTEB_PARAM_RE = re.compile(r"_(alpha|beta|rel)_(-?[0-9.]+)")


@dataclass(frozen=True)
class Measure:
    """A parsed measure: ``name`` is the spelling used as output key (whitespace removed)."""

    name: str
    family: str
    kind: MeasureKind
    cutoff: int | None
    params: dict[str, float] = field(default_factory=dict, hash=False)

    def _suffix(self, sep: str) -> str:
        return "".join(f"{sep}{k}{sep}{_fmt(v)}" for k, v in sorted(self.params.items()))

    @property
    def mteb_key(self) -> str:
        """MTEB score key: ``nDCG@10`` -> ``ndcg_at_10``; parameters join the stem: ``alpha_ndcg_alpha_0.9_at_20``."""
        key = _BY_NAME[self.family].mteb + self._suffix("_")
        return key if self.cutoff is None else f"{key}_at_{self.cutoff}"

    @property
    def label(self) -> str:
        """Table label: ``AP@10`` -> ``MAP@10``, ``alpha_nDCG@20`` -> ``α-nDCG@20``."""
        params = ",".join(f"{k}={_fmt(v)}" for k, v in sorted(self.params.items()))
        text = _BY_NAME[self.family].label + (f"({params})" if params else "")
        return text if self.cutoff is None else f"{text}@{self.cutoff}"


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _accepted() -> str:
    return (", ".join(f.name for f in FAMILIES) + " (or their table labels, MAP@10, α-nDCG@20, or MTEB score keys, "
            "map_at_10)")


def measures_help() -> str:
    """The accepted spellings, for CLI help: ``nDCG@k, R@k, ..., AP_IA, NRBP, nNRBP``."""
    spell = {REQUIRED: "{}@k", OPTIONAL: "{}@k, {}", NO_CUTOFF: "{}"}
    return ", ".join(spell[f.cutoff].format(f.name, f.name) for f in FAMILIES)


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name in any spelling a command prints or accepts (``AP@10``, ``MAP@10``, ``map_at_10``,
    ``alpha_nDCG(alpha=0.9)@20``, ``α-nDCG@20``, ``alpha_ndcg_alpha_0.9_at_20``); ValueError naming the problem on
    anything else. ``Measure.name`` keeps the spelling given (whitespace removed) for a name with ``@`` or
    parameters, and is the ir_measures spelling for an MTEB score key."""
    if isinstance(name, Measure):
        return name
    if not isinstance(name, str):
        raise TypeError(f"measure names are strings, got {name!r}")
    text = "".join(name.split())
    m = _NAME_RE.match(text)
    family = _SPELLINGS.get(m["family"]) if m else None
    if family is None and re.fullmatch(r"[a-z0-9_.-]+", text):  # an MTEB score key (map_at_10, alpha_ndcg_at_20)?
        try:
            return from_mteb_key(text)
        except ValueError:
            pass
    if not m:
        raise ValueError(f"malformed measure name {name!r}; expected e.g. 'nDCG@10', 'MAP@10', 'ndcg_at_10' or "
                         "'alpha_nDCG(alpha=0.9)@20'")
    if family is None:
        # names are case-sensitive, as in ir_measures; a near miss is named with its table label
        labels = {f.label.casefold(): f.label for f in reversed(FAMILIES)} | {
            f.name.casefold(): f.label for f in reversed(FAMILIES)}
        close = difflib.get_close_matches(m["family"].casefold(), list(labels), n=1)
        hint = f" (did you mean {labels[close[0]]}?)" if close else ""
        raise ValueError(f"unknown measure {name!r}{hint}; known measures: {_accepted()}")
    cutoff = int(m["cutoff"]) if m["cutoff"] is not None else None
    if family.cutoff == REQUIRED and cutoff is None:
        raise ValueError(f"measure {name!r} needs a cutoff, e.g. '{family.name}@20'")
    if family.cutoff == NO_CUTOFF and cutoff is not None:
        raise ValueError(f"measure {name!r} takes no cutoff (it uses the whole ranking)")
    if cutoff is not None and cutoff < 1:
        raise ValueError(f"measure {name!r}: the cutoff must be >= 1")
    params: dict[str, float] = {}
    if m["params"]:
        for item in m["params"].split(","):
            key, sep, value = item.partition("=")
            if not sep or key not in family.params:
                raise ValueError(
                    f"measure {name!r}: unsupported parameter {item!r}; {family.name} accepts "
                    f"{sorted(family.params) or 'no parameters'}"
                )
            try:
                params[key] = int(value) if key == "rel" else float(value)
            except ValueError:
                raise ValueError(f"measure {name!r}: parameter {key} must be a number, got {value!r}") from None
    # rel is the label threshold: a judged doc with label >= rel is relevant (trec_eval's -l). Below 0 every
    # judged and unjudged doc would count, which no reference tool computes; coverage needs >= 1 (ndeval).
    lowest_rel = 0 if family.kind == ADHOC else 1
    if params.get("rel", lowest_rel) < lowest_rel:
        raise ValueError(f"measure {name!r}: rel must be an integer >= {lowest_rel}, got {params['rel']!r}")
    for key in ("alpha", "beta"):
        if key in params and not (0.0 <= params[key] <= 1.0):
            raise ValueError(f"measure {name!r}: {key} must lie in [0, 1], got {params[key]!r}")
    return Measure(name=text, family=family.name, kind=family.kind, cutoff=cutoff, params=params)


def from_mteb_key(key: str) -> Measure:
    """The measure behind an MTEB score key (``alpha_ndcg_at_20`` -> ``alpha_nDCG@20``); ValueError otherwise."""
    rest, cutoff = key, None
    m = re.search(r"_at_([0-9]+)$", rest)
    if m:
        rest, cutoff = rest[: m.start()], m[1]
    for stem in sorted(_BY_MTEB, key=len, reverse=True):  # longest first: "alpha_ndcg" before "ndcg"
        if rest == stem or rest.startswith(stem + "_"):
            tail = rest[len(stem):]
            params = _MTEB_PARAM_RE.findall(tail)
            if "".join(f"_{k}_{v}" for k, v in params) != tail:
                break
            text = _BY_MTEB[stem].name
            if params:
                text += "(" + ",".join(f"{k}={v}" for k, v in params) + ")"
            # the ir_measures spelling has the family's name, so parse_measure never comes back here
            return parse_measure(text if cutoff is None else f"{text}@{cutoff}")
    raise ValueError(f"{key!r} is not the MTEB score key of a known measure ({_accepted()})")


def measure_label(key: str) -> str:
    """Table label of a measure name or MTEB score key; any other key is returned as is."""
    try:
        return parse_measure(key).label
    except ValueError:
        return key


def max_depth(measures: Iterable[str | Measure]) -> int | None:
    """How much of each ranking the measures read: the largest cutoff, or None (the whole ranking) when
    any measure has no cutoff (``AP``, ``nDCG``, ``AP_IA``, ``NRBP``, ...). Pass it to ``rank_run(run, depth=...)``.
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    cutoffs = [parse_measure(m).cutoff for m in measures]
    if not cutoffs or None in cutoffs:
        return None
    return max(c for c in cutoffs if c is not None)
