"""CoverageBench (Samuel et al. 2026): nugget judgments + external corpora → the standard layout.

    complexir build coveragebench --source hltcoe/coveragebench --out DIR
        [--subset cast2020 crux_duc04 ...] [--corpus pooled|full] [--docs SUBSET=SOURCE ...]

The upstream release (a Hub dataset repo, or a local folder holding its files) carries, per subset,
topics (``topic_id``, ``query``, ``nuggets``), ``nuggets/<subset>_nuggets.tsv`` (``<topic_id> <nugget_num>
<text…>``, split on the first two spaces only), nugget-level judgments ``qrels/<subset>.qrels``
(``<topic_id> <nugget_num> <doc_id> <label>``, the nugget number in TREC's iteration column) and baseline
runs, but no document text. The text comes from a corpus source per subset (``--docs``): an ir_datasets
id, a Hub dataset, or a local JSONL / TREC file.

What a build writes per subset (split ``test``):
- ``queries``: the topic's ``query``;
- ``nuggets``: id = the upstream nugget number, text from the TSV, weight 1.0, ``support`` = every judged
  document of that nugget with its grade (zeros included, so the judged pool is kept);
- ``qrels``: document-level, derived as the **maximum grade over the topic's nuggets** (0 = judged, no nugget);
- ``top_ranked``: the top ``--rerank-depth`` (50) documents of a baseline run, for reranking;
- ``corpus``: ``pooled`` (judged documents + the baseline runs' candidates, looked up by id) or ``full``.

Judgments on documents that the corpus source does not hold are kept and counted in the card: as in ndeval
and trec_eval, such a document is judged and never retrieved (its nuggets stay supported, it stays in the ideal
ranking). Baseline candidates the source lacks are dropped from ``top_ranked`` (nothing could score them) and
counted. Topics left without a positive judgment are dropped by the writer and counted too.
"""

from __future__ import annotations

import argparse
import fnmatch
import logging
import statistics
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Self

from complexir.layout.card import CardInfo
from complexir.layout.writer import BenchmarkWriter
from complexir.registry.benchmarks import COVERAGEBENCH
from complexir.upstream.corpus import (
    CorpusSource,
    irds_known,
    iter_documents,
    parse_corpus_source,
    pooled_documents,
)
from complexir.upstream.coveragebench import SPLIT, SubsetRelease, available_subsets, read_subset
from complexir.upstream.options import BuildOptions, add_build_arguments
from complexir.upstream.release import resolve_release

logger = logging.getLogger(__name__)

SPEC = COVERAGEBENCH
HUB_ID = SPEC.upstream[0]
SUBSETS = SPEC.subset_names()
# Where each subset's document text lives (UPSTREAM.md, docs/benchmarks/coveragebench.md); override with --docs.
DEFAULT_DOCS = {s.name: s.documents for s in SPEC.subsets if s.documents}
# the original text of the collections whose default is a translation (--docs-language native)
NATIVE_DOCS = {s.name: s.native_documents for s in SPEC.subsets if s.native_documents}
LANGUAGES = ("translated", "native")
DEFAULT_RERANK_DEPTH = 50
# CRUX rates each (document, sub-question) pair 0-5 for answerability and counts a nugget as covered from 3
# (DylanJoo/crux: crux/evaluation/prejudge/retrieval_augmentation_context.py, threshold=3)
CRUX_SUPPORT_THRESHOLD = 3
RAG_2024_CORPUS = (
    "the TREC RAG 2024 segmented MS MARCO v2.1 corpus (113,520,750 segments; msmarco_v2.1_doc_segmented.tar, "
    "linked from https://trec-rag.github.io/annoucements/2024-corpus-finalization/)")


def missing_collection_message(subset: str, source: CorpusSource) -> str:
    """The one line a build stops on when a subset's collection is in no library: where it comes from, what to
    pass. Said before any collection is read."""
    import ir_datasets

    if subset == "rag_2024":
        return (f"rag_2024: its documents are {RAG_2024_CORPUS}, which ir_datasets {ir_datasets.__version__} does not "
                f"know ({source.location!r}); download and unpack it, then pass --docs "
                "rag_2024=<the unpacked msmarco_v2.1_doc_segmented folder>, or leave rag_2024 out with --subset")
    return (f"{subset}: ir_datasets {ir_datasets.__version__} does not know {source.location!r}; upgrade "
            f"ir_datasets or pass --docs {subset}=<a local JSONL file or folder, or a TREC file>")


# -- building --------------------------------------------------------------------------------------
def _select_baseline(runs: dict[str, dict[str, dict[str, float]]], pattern: str | None) -> str | None:
    if not runs:
        return None
    names = sorted(runs)
    if pattern:
        chosen = [n for n in names if fnmatch.fnmatch(n, pattern) or fnmatch.fnmatch(Path(n).name, pattern)]
        if not chosen:
            raise ValueError(f"--baseline {pattern!r} matches none of the runs {names}")
        return chosen[0]
    return names[0]


def _spread(values: list[float]) -> str:
    if not values:
        return "–"
    return f"{statistics.fmean(values):.2f} / {min(values):g} / {max(values):g}"


def build_subset(writer: BenchmarkWriter, subset: str, release: SubsetRelease, source: CorpusSource, *,
                 corpus: str, rerank_depth: int, baseline: str | None, progress: bool,
                 support_threshold: int | None = None, threshold_given: bool = False) -> dict[str, Any]:
    """Write one subset (a document supports a nugget from grade ``support_threshold``, by default
    :func:`support_threshold`'s); returns the statistics the card's tables show."""
    judged = {d for ns in release.judgments.values() for docs in ns.values() for d in docs}
    chosen = _select_baseline(release.runs, baseline)
    ranked_runs = {name: release.ranked(name) for name in release.runs}
    candidates = {d for run in ranked_runs.values() for docs in run.values() for d in docs[:rerank_depth]}

    if corpus == "pooled":
        rows = pooled_documents(source, judged | candidates, progress=progress)
        n_docs = writer.write_corpus(subset, rows, total=len(rows))
        present = {r["id"] for r in rows}
    else:
        present = set()
        tracked = judged | candidates

        def stream() -> Iterator[dict[str, str]]:
            for row in iter_documents(source):
                if row["id"] in tracked:
                    present.add(row["id"])
                yield row

        n_docs = writer.write_corpus(subset, stream())

    missing_judged = judged - present
    kept_judgments = sum(1 for ns in release.judgments.values() for docs in ns.values() for d in docs
                         if d not in present)
    if missing_judged:
        logger.warning("%s: %d judged documents (%d judgments) are not in %s; their judgments are kept (judged, "
                       "never retrieved)", subset, len(missing_judged), kept_judgments, source)

    queries: list[dict[str, Any]] = []
    qrels: list[dict[str, Any]] = []
    nuggets: list[dict[str, Any]] = []
    top_ranked: list[dict[str, Any]] = []
    for tid, topic in release.topics.items():
        queries.append({"id": tid, "text": topic.query})
        doc_grade: dict[str, int] = {}
        for num, text in release.nuggets.get(tid, {}).items():
            support: list[dict[str, Any]] = [
                {"corpus-id": d, "score": g} for d, g in release.judgments.get(tid, {}).get(num, {}).items()]
            for s in support:  # doc-level grade = max over the topic's nuggets
                doc_grade[s["corpus-id"]] = max(doc_grade.get(s["corpus-id"], 0), s["score"])
            nuggets.append({"query-id": tid, "nugget-id": num, "text": text, "weight": 1.0, "support": support})
        qrels.extend({"query-id": tid, "corpus-id": d, "score": g} for d, g in doc_grade.items())
        if chosen is not None:
            docs = [d for d in ranked_runs[chosen].get(tid, [])[:rerank_depth] if d in present]
            if docs:
                top_ranked.append({"query-id": tid, "corpus-ids": docs})
    missing_candidates = {d for d in candidates if d not in present}

    counts = writer.write_split(subset, SPLIT, queries=queries, qrels=qrels, nuggets=nuggets,
                                top_ranked=top_ranked if chosen is not None else None)
    threshold = support_threshold if support_threshold is not None else default_support_threshold(subset, release)
    if threshold > 1:
        writer.set_support_threshold(subset, threshold)
        why = "--support-threshold" if threshold_given else "CRUX's answerability threshold"
        writer.note(subset, "nugget support", f"graded labels (0-{max_grade(release)}): a document supports a "
                                              f"nugget at grade >= {threshold} ({why})")
    if release.runs:  # every released baseline, as released: scored as systems by `complexir run --release-runs`
        n_rows = writer.write_runs(subset, SPLIT, (
            {"run": name, "query-id": tid, "corpus-id": d, "rank": rank, "score": release.runs[name][tid][d]}
            for name, ranked in ranked_runs.items() for tid, docs in ranked.items()
            for rank, d in enumerate(docs, 1)))
        writer.note(subset, "runs", f"{len(release.runs)} released run(s) kept as released ({n_rows:,} rows): "
                                    f"{', '.join(sorted(release.runs))}")

    writer.note(subset, "corpus setting", f"{corpus} ({n_docs:,} documents from {source})")
    writer.note(subset, "judged documents missing from the corpus source (judgments kept: judged, never retrieved)",
                f"{len(missing_judged):,} documents, {kept_judgments:,} nugget judgments")
    if chosen is not None:
        writer.note(subset, "top_ranked", f"top {rerank_depth} of baseline run `{chosen}` "
                                          f"({len(release.runs)} run(s) available: {', '.join(sorted(release.runs))})")
        writer.note(subset, "baseline candidates missing from the corpus source", f"{len(missing_candidates):,}")
    else:
        writer.note(subset, "top_ranked", "no baseline run in the release: no reranking config")

    kept = {r["query-id"] for r in qrels if r["score"] > 0}
    per_topic = [len(release.nuggets.get(t, {})) for t in release.topics if t in kept]
    support_counts = [sum(1 for s in n["support"] if s["score"] > 0) for n in nuggets if n["query-id"] in kept]
    return {
        "topics": len(release.topics), "kept": counts["queries"], "dropped": counts["dropped_queries"],
        "nuggets_per_topic": per_topic, "support_per_nugget": support_counts,
        "unsupported": sum(1 for c in support_counts if c == 0),
        "corpus": corpus, "source": str(source), "documents": n_docs,
        "missing_judged": len(missing_judged), "kept_judgments": kept_judgments,
        "baseline": chosen or "–",
    }


def max_grade(release: SubsetRelease) -> int:
    return max((g for ns in release.judgments.values() for docs in ns.values() for g in docs.values()), default=0)


def default_support_threshold(subset: str, release: SubsetRelease) -> int:
    """The grade from which a judged document supports a nugget: CRUX's 3 when a CRUX subset's labels are graded
    (any above 1, so on CRUX's 0-5 answerability scale), else 1 (binary or TREC-graded nugget labels)."""
    if subset.startswith("crux_") and max_grade(release) > 1:
        return CRUX_SUPPORT_THRESHOLD
    return 1


def checked_support_threshold(subset: str, release: SubsetRelease, given: int | None) -> int:
    """The support threshold of ``subset`` (``given``, else :func:`default_support_threshold`), refused when no
    nugget of the subset would have a supporting document: every coverage score would be 0 without a word (a
    release graded 0-2 read on CRUX's 0-5 scale)."""
    if given is not None and given < 1:
        raise ValueError(f"--support-threshold {given}: expected a grade of at least 1")
    threshold = given if given is not None else default_support_threshold(subset, release)
    labels = sorted({g for ns in release.judgments.values() for docs in ns.values() for g in docs.values()})
    if labels and max(labels) < threshold:
        why = "given" if given is not None else (
            "CRUX's 0-5 answerability scale, read because a label is above 1" if threshold == CRUX_SUPPORT_THRESHOLD
            else "the default")
        raise ValueError(f"{subset}: no nugget has a supporting document at grade >= {threshold} ({why}); the labels "
                         f"seen are {', '.join(map(str, labels))}: pass --support-threshold N, the grade from which a "
                         f"document supports a nugget (e.g. --support-threshold {max(max(labels), 1)})")
    return threshold


def card_languages(subsets: list[str], languages: dict[str, str] | None = None) -> list[str]:
    """The card's ``languages``: English (every subset's topics, and the translations), plus the original
    languages of the subsets whose native text is read."""
    languages = languages or {}
    return list(dict.fromkeys(["en", *(lang for s in subsets for lang in (
        SPEC.subset(s).native_languages if languages.get(s) == "native" else SPEC.subset(s).document_languages))]))


def _tables(stats: dict[str, dict[str, Any]]) -> dict[str, str]:
    nugget = ["| subset | topics (upstream) | topics kept | topics dropped (no supported nugget) | nuggets / topic "
              "(mean / min / max) | supporting docs / nugget (mean / min / max) | nuggets without support |",
              "|---|---:|---:|---:|---|---|---:|"]
    corpus = ["| subset | corpus setting | corpus source | document text | documents | judged docs missing | "
              "nugget judgments on them (kept) | baseline for top_ranked |", "|---|---|---|---|---:|---:|---:|---|"]
    for subset, st in stats.items():
        nugget.append(f"| {subset} | {st['topics']} | {st['kept']} | {st['dropped']} "
                      f"| {_spread(st['nuggets_per_topic'])} | {_spread(st['support_per_nugget'])} "
                      f"| {st['unsupported']} |")
        corpus.append(f"| {subset} | {st['corpus']} | `{st['source']}` | {st['language']} | {st['documents']:,} | "
                      f"{st['missing_judged']:,} | {st['kept_judgments']:,} | `{st['baseline']}` |")
    return {"nugget_table": "\n".join(nugget), "corpus_table": "\n".join(corpus)}


def document_language(subset: str, languages: dict[str, str]) -> str:
    """``translated`` or ``native`` for a collection that has both, else ``original``."""
    if subset not in NATIVE_DOCS:
        return "original"
    return languages.get(subset, "translated")


def _default_source(subset: str, languages: dict[str, str]) -> str:
    return NATIVE_DOCS[subset] if document_language(subset, languages) == "native" else DEFAULT_DOCS[subset]


def _pin_hub_revision(source: CorpusSource) -> CorpusSource:
    """A Hub collection read at the commit its ``main`` is at now, so that the card names what was read. Offline
    (or without the Hub) the revision stays unnamed and the card says so."""
    if source.kind != "hf" or source.revision or Path(source.location).is_dir():  # pinned already, or a local copy
        return source
    try:
        from huggingface_hub import HfApi

        sha = HfApi().dataset_info(source.location).sha
    except Exception as error:  # offline, or no access: datasets reads its cache, the card says "unpinned"
        logger.warning("could not resolve the commit of %s (%s); reading it unpinned", source.location,
                       str(error).splitlines()[0] if str(error) else type(error).__name__)
        return source
    from dataclasses import replace

    return replace(source, revision=sha)


def build_coveragebench(
    source: str | Path,
    out_dir: str | Path,
    *,
    subsets: list[str] | None = None,
    corpus: str = "pooled",
    docs: dict[str, str] | None = None,
    docs_language: dict[str, str] | None = None,
    rerank_depth: int = DEFAULT_RERANK_DEPTH,
    baseline: str | None = None,
    support_threshold: int | None = None,
    revision: str | None = None,
    overwrite: bool = False,
    progress: bool = True,
    before_swap: Callable[[Path], object] | None = None,
) -> Path:
    """Build the CoverageBench folder from ``source`` (Hub id or local folder); returns ``out_dir``.

    ``docs_language`` maps a subset (or ``"*"``: every one) to ``translated`` (the default: the paper's documents)
    or ``native``, for the collections that come in both (NeuCLIR 2024, RAGTIME 2025).
    """
    if corpus not in ("pooled", "full"):
        raise ValueError(f"corpus must be 'pooled' or 'full', got {corpus!r}")
    if rerank_depth < 1:
        raise ValueError(f"rerank depth must be >= 1, got {rerank_depth}")
    upstream = resolve_release(source, revision, expected="the CoverageBench release files")
    root = upstream.root
    local_base = root if upstream.local else None  # where relative --docs paths may also be found
    # each subset once, in the order given: the same name twice would write its corpus twice
    wanted = list(dict.fromkeys(subsets)) if subsets else available_subsets(root, SUBSETS)
    if not wanted:
        raise FileNotFoundError(f"{root}: no subset's files (topics, nuggets/<subset>_nuggets.tsv, "
                                "qrels/<subset>.qrels) are in the release")
    unknown = [s for s in wanted if s not in SUBSETS]
    if unknown:
        raise ValueError(f"unknown subset(s) {unknown}; CoverageBench has {list(SUBSETS)}")
    docs = dict(docs or {})
    bad = [s for s in docs if s not in SUBSETS]
    if bad:
        raise ValueError(f"--docs names unknown subset(s) {bad}; CoverageBench has {list(SUBSETS)}")
    languages = _languages(docs_language or {}, wanted)

    # Everything that can fail on the release or on a missing collection fails here, before any collection is
    # read and before anything is written.
    sources = {s: parse_corpus_source(docs.get(s) or _default_source(s, languages), local_base) for s in wanted}
    for subset, src in sources.items():
        if src.kind == "irds" and not irds_known(src.location):
            raise FileNotFoundError(missing_collection_message(subset, src))
    releases = {subset: read_subset(root, subset) for subset in wanted}
    thresholds = {subset: checked_support_threshold(subset, releases[subset], support_threshold) for subset in wanted}
    sources = {s: _pin_hub_revision(src) for s, src in sources.items()}

    card = CardInfo(
        benchmark=SPEC.folder, pretty_name=SPEC.pretty_name, license=SPEC.license, citation=SPEC.citation,
        source=upstream.card_source(HUB_ID), revision=upstream.card_revision(),
        languages=card_languages(wanted, languages),
        task_categories=["text-retrieval"], task_ids=["document-retrieval"],
    )
    stats: dict[str, dict[str, Any]] = {}
    # the writer refuses an --out inside any of these (a shards folder as a whole, not only its files)
    local_docs = [Path(s.location) for s in sources.values() if s.kind in ("jsonl", "trec")]
    with BenchmarkWriter(out_dir, card, overwrite=overwrite, progress=progress, inputs=[root, *local_docs],
                         before_swap=before_swap) as writer:
        for subset in wanted:
            release = releases[subset]
            logger.info("%s: %d topics, %d nuggets, corpus %s (%s)", subset, len(release.topics),
                        sum(map(len, release.nuggets.values())), sources[subset], corpus)
            stats[subset] = build_subset(writer, subset, release, sources[subset], corpus=corpus,
                                         rerank_depth=rerank_depth, baseline=baseline, progress=progress,
                                         support_threshold=thresholds[subset],
                                         threshold_given=support_threshold is not None)
            language = document_language(subset, languages)
            stats[subset]["language"] = ("as given (--docs)" if subset in docs and language == "original"
                                         else language)
            if subset in NATIVE_DOCS:
                writer.note(subset, "document text", f"{language}" + (" (English machine translation, as the paper "
                            "scored)" if language == "translated" else " (the original languages)")
                            + (f"; --docs {sources[subset]}" if subset in docs else ""))  # no path of this machine
        card.extra.update(_tables(stats))
        card.extra["corpus_setting"] = corpus
    return Path(out_dir)


def _languages(values: dict[str, str], wanted: list[str]) -> dict[str, str]:
    """``--docs-language`` as subset -> translated|native (``*``: every subset that has both)."""
    out: dict[str, str] = {}
    for subset, language in values.items():
        if language not in LANGUAGES:
            raise ValueError(f"--docs-language {subset}={language}: expected one of {', '.join(LANGUAGES)}")
        if subset == "*":
            out.update({s: language for s in wanted if s in NATIVE_DOCS})
        elif subset not in NATIVE_DOCS:
            raise ValueError(f"--docs-language {subset}={language}: only {', '.join(NATIVE_DOCS)} come both "
                             "translated and native")
        else:
            out[subset] = language
    return out


# -- CLI -------------------------------------------------------------------------------------------
def _docs_arg(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        subset, sep, spec = value.partition("=")
        if not sep or not subset or not spec:
            raise argparse.ArgumentTypeError(f"--docs expects SUBSET=SOURCE, got {value!r}")
        out[subset] = spec
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_build_arguments(parser, default_source=HUB_ID, subsets=SUBSETS,
                        source_help="the release: a Hub dataset id or a local folder with its files")
    parser.add_argument("--corpus", choices=("pooled", "full"), default="pooled",
                        help="pooled: judged documents + baseline candidates, looked up by id (default); "
                             "full: stream the whole collection")
    parser.add_argument("--docs", nargs="+", action="extend", default=[], metavar="SUBSET=SOURCE",
                        help="document source of a subset: irds:<ir_datasets id>, hf:<repo>[@<revision>][:<config>]"
                             "[?files=A,B|?splits=A,B], jsonl:<file or folder of .jsonl/.json(.gz) shards>, "
                             "trec:<file>, or a bare file / folder / id (defaults: "
                             + ", ".join(f"{k}={v}" for k, v in DEFAULT_DOCS.items()) + ")")
    parser.add_argument("--docs-language", nargs="+", action="extend", default=[],
                        metavar="[SUBSET=]translated|native",
                        help="document text of " + " and ".join(NATIVE_DOCS) + ": translated (default: their "
                             "English machine translation, as the paper scored) or native (the original languages: "
                             + ", ".join(f"{k}={v}" for k, v in NATIVE_DOCS.items()) + "); alone for every such "
                             "subset, or per subset")
    parser.add_argument("--rerank-depth", type=int, default=DEFAULT_RERANK_DEPTH,
                        help=f"baseline documents per topic kept in top_ranked (default {DEFAULT_RERANK_DEPTH})")
    parser.add_argument("--support-threshold", type=int, default=None, metavar="GRADE",
                        help="the grade from which a judged document supports a nugget, for every subset built "
                             f"(default: {CRUX_SUPPORT_THRESHOLD} for CRUX subsets whose labels go above 1, CRUX's "
                             "0-5 answerability scale; else 1); a grade that leaves a subset with no supported nugget "
                             "stops the build")
    parser.add_argument("--baseline", default=None,
                        help="glob selecting the baseline run for top_ranked (default: the first run by name)")


def _docs_language_arg(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        subset, sep, language = value.rpartition("=")
        out[subset if sep else "*"] = language
    return out


def pinned_documents(documents: dict[str, str]) -> dict[str, dict[str, str]]:
    """``{"docs": {SUBSET: "hf:<repo>@<commit>[:<config>][?...]"}}`` for each subset whose collection is a Hub
    dataset named in ``documents`` (source -> commit): the options a build into the cache
    (``complexir.hub.build_cache``) gives, so that it reads the commits its cache key names. ir_datasets collections
    need none (the installed ir_datasets is the version the key names)."""
    pinned = {}
    for subset, source in DEFAULT_DOCS.items():
        if source.startswith("hf:") and source in documents:
            head, sep, select = source.removeprefix("hf:").partition("?")
            repo, _, config = head.partition(":")
            pinned[subset] = (f"hf:{repo}@{documents[source]}" + (f":{config}" if config else "")
                              + (f"?{select}" if sep else ""))
    return {"docs": pinned} if pinned else {}


@dataclass(frozen=True)
class CoverageBenchOptions(BuildOptions):
    """A CoverageBench build: the corpus setting, each subset's document source and language, the baseline kept in
    top_ranked and its depth."""

    corpus: str = "pooled"  # pooled or full
    docs: Mapping[str, str] = field(default_factory=dict)  # subset -> document source (default: DEFAULT_DOCS)
    docs_language: Mapping[str, str] = field(default_factory=dict)  # subset (or *) -> translated|native
    rerank_depth: int = DEFAULT_RERANK_DEPTH
    baseline: str | None = None  # glob selecting the baseline run (default: the first run by name)
    support_threshold: int | None = None  # the grade from which a document supports a nugget (None: the release's)

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> Self:
        """``--docs SUBSET=SOURCE ...`` and ``--docs-language [SUBSET=]LANGUAGE ...`` as mappings."""
        options = super().from_flags(flags)
        return replace(options, docs=_docs_arg(flags.get("docs") or []),
                       docs_language=_docs_language_arg(flags.get("docs_language") or []))


OPTIONS = CoverageBenchOptions


def build(options: CoverageBenchOptions) -> int:
    build_coveragebench(
        options.source_or(HUB_ID), options.out, subsets=options.subset_list(), corpus=options.corpus,
        docs=dict(options.docs), docs_language=dict(options.docs_language), rerank_depth=options.rerank_depth,
        baseline=options.baseline, revision=options.revision, support_threshold=options.support_threshold,
        overwrite=options.overwrite, progress=options.progress, before_swap=options.before_swap,
    )
    return 0
