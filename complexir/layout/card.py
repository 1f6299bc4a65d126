"""Dataset cards: the README.md of a benchmark folder, YAML front matter plus a body from ``cards/``.

The front matter announces every config to ``datasets`` (so ``load_dataset(folder, "<subset>-corpus")``
works without code) and carries the Hub metadata; the body is the benchmark's template from ``cards/``
with ``$placeholders`` filled by the build's real statistics.
"""

from __future__ import annotations

import importlib.resources
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from complexir.layout.errors import LayoutError


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` rows."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
              (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
    for bound, label in bounds:
        if n < bound:
            return label
    return "1B<n<10B"


@dataclass
class CardInfo:
    """What a loading script knows about its benchmark: metadata for the card, not data."""

    benchmark: str  # the template name in cards/ and the folder name under a data dir, e.g. "crumb"
    pretty_name: str
    license: str  # a Hub licence id, e.g. "cc-by-nc-4.0"
    citation: str  # BibTeX
    source: str  # the upstream release: a Hub id or a local path
    revision: str = "unknown"
    languages: list[str] = field(default_factory=lambda: ["en"])
    task_categories: list[str] = field(default_factory=lambda: ["text-retrieval"])
    task_ids: list[str] = field(default_factory=lambda: ["document-retrieval"])
    template: str | Path | None = None  # default: cards/<benchmark>.md
    extra: dict[str, str] = field(default_factory=dict)  # more $placeholders for the template


def read_front_matter(readme: Path) -> dict[str, Any]:
    """The YAML front matter of a README.md, or {} when it has none. Invalid YAML, or YAML that is not a
    mapping, is a ``LayoutError`` naming the file and line.

    The block is found with ``huggingface_hub``'s own pattern, so a card reads here as the Hub reads it: a
    byte-order mark, CRLF line ends and blank lines before the first ``---`` are accepted.
    """
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    text = readme.read_text(encoding="utf-8-sig")
    block = REGEX_YAML_BLOCK.search(text)
    if block is None:
        return {}
    try:
        meta = yaml.safe_load(block.group(2))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        lines_before = len(re.findall(r"\r\n|\r|\n", block.group(1)))  # the opening '---' and any blank lines
        where = f"{readme}:{mark.line + lines_before + 1}" if mark is not None else str(readme)  # mark is 0-based
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise LayoutError(f"{where}: invalid YAML front matter: {problem}") from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise LayoutError(f"{readme}: the YAML front matter must be a mapping of keys, got a {type(meta).__name__}")
    return meta


def _template_text(info: CardInfo) -> str:
    if info.template is not None:
        return Path(info.template).read_text(encoding="utf-8")
    resource = importlib.resources.files("complexir.cards") / f"{info.benchmark}.md"
    if resource.is_file():
        return resource.read_text(encoding="utf-8")
    return "# $pretty_name\n\n$counts_table\n\n$build_notes\n\n## Citation\n\n```bibtex\n$citation\n```\n"


def _counts_table(stats: dict[str, dict[str, Any]]) -> str:
    rows = ["| subset | split | documents | queries | qrels | nuggets | dropped queries (no positive) "
            "| of which judged (score 0 in means) | judgments on documents missing from the corpus |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for subset, st in stats.items():
        if not st["splits"]:  # a corpus that other subsets' tasks read
            rows.append(f"| {subset} | corpus only | {st['documents']:,} | - | - | - | - | - | - |")
        for split, sp in st["splits"].items():
            missing = f"{sp.get('missing_document_qrels', 0):,}"
            if sp.get("missing_document_support"):
                missing += f" (+ {sp['missing_document_support']:,} nugget supports)"
            rows.append(
                f"| {subset} | {split} | {st['documents']:,} | {sp['queries']:,} | {sp['qrels']:,} "
                f"| {sp['nuggets']:,} | {sp['dropped_queries']:,} | {sp['judged_without_positive']:,} | {missing} |"
            )
    return "\n".join(rows)


def _length_table(stats: dict[str, dict[str, Any]]) -> str:
    rows = ["| subset | documents | mean words | p50 words | p95 words | max words |",
            "|---|---:|---:|---:|---:|---:|"]
    for subset, st in stats.items():
        w = st["words"]
        rows.append(
            f"| {subset} | {st['documents']:,} | {w['mean']:.1f} | {w['p50']:.0f} | {w['p95']:.0f} | {w['max']:,} |"
        )
    return "\n".join(rows)


def _notes(stats: dict[str, dict[str, Any]]) -> str:
    lines = [f"- **{subset}**: {key}: {value}" for subset, st in stats.items() for key, value in st["notes"].items()]
    return "\n".join(lines) if lines else "- none"


ZERO_SCORE_KEY = "zero_score_queries"  # under the card's `complexir` key


def _zero_score_block(stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``complexir: {zero_score_queries: {subset: {split: [query ids]}}}``, when any subset has such queries.

    These are judged queries with no relevant document. The layout drops them (MTEB cannot score them), but
    trec_eval and ndeval count them in every mean with score 0; the tasks read this list to do the same.
    """
    block = {subset: st["zero_score_queries"] for subset, st in stats.items() if st.get("zero_score_queries")}
    return {"complexir": {ZERO_SCORE_KEY: block}} if block else {}


MISSING_DOCUMENTS_KEY = "missing_document_judgments"  # under the card's `complexir` key


def _missing_documents_block(stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{subset: {split: {qrels: n, nugget_support: m}}}`` for the splits that judge documents the corpus lacks.

    Such judgments are kept (trec_eval and ndeval count the document as relevant and never retrieved); the
    validator accepts exactly the number declared here, so an accidental dangling reference still fails.
    """
    block: dict[str, dict[str, dict[str, int]]] = {}
    for subset, st in stats.items():
        for split, sp in st["splits"].items():
            qrels, support = sp.get("missing_document_qrels", 0), sp.get("missing_document_support", 0)
            if qrels or support:
                block.setdefault(subset, {})[split] = {"qrels": qrels, "nugget_support": support}
    return block


SUPPORT_THRESHOLD_KEY = "support_threshold"  # under the card's `complexir` key: {subset: lowest supporting grade}


def complexir_block(stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The card's ``complexir`` metadata: zero-score queries, judgments on missing documents, and the nugget
    grade from which a document supports a nugget where it is not 1 (a graded scale such as CRUX's)."""
    block = _zero_score_block(stats).get("complexir", {})
    missing = _missing_documents_block(stats)
    if missing:
        block[MISSING_DOCUMENTS_KEY] = missing
    thresholds = {subset: st["support_threshold"] for subset, st in stats.items() if st.get("support_threshold")}
    if thresholds:
        block[SUPPORT_THRESHOLD_KEY] = thresholds
    return {"complexir": block} if block else {}


def front_matter(info: CardInfo, stats: dict[str, dict[str, Any]], files: dict[str, dict[str, str]],
                 digests: dict[str, str] | None = None) -> dict:
    """The card's YAML metadata. ``files`` maps config name → {split: data_files pattern}; ``digests`` maps
    config name → the sha256 of its parquet files.

    The digest goes into each config's ``description``. ``datasets`` keys its cache of a local folder on the
    folder's name and the YAML configs, not on the files' content: without it, a folder rebuilt in place, or
    another folder of the same name (a demo and a real build), would silently load the stale cached copy.
    """
    digests = digests or {}
    largest = max((st["documents"] for st in stats.values()), default=0)
    return {
        "pretty_name": info.pretty_name,
        "license": info.license,
        "language": info.languages,
        "task_categories": info.task_categories,
        "task_ids": info.task_ids,
        "size_categories": [size_category(largest)],
        "tags": ["complexir", "mteb", "retrieval"],
        "source_datasets": [info.source],
        "citation": info.citation.strip(),
        **complexir_block(stats),
        "configs": [
            {
                "config_name": name,
                "data_files": [{"split": s, "path": p} for s, p in splits.items()],
                **({"description": f"{name}; content sha256 {digests[name]}"} if name in digests else {}),
            }
            for name, splits in files.items()
        ],
    }


def render(info: CardInfo, stats: dict[str, dict[str, Any]], files: dict[str, dict[str, str]],
           digests: dict[str, str] | None = None) -> str:
    """The whole README.md of a benchmark folder."""
    meta = yaml.safe_dump(front_matter(info, stats, files, digests), sort_keys=False, allow_unicode=True, width=1000)
    values = {
        "pretty_name": info.pretty_name,
        "license": info.license,
        "citation": info.citation.strip(),
        "source": info.source,
        "revision": info.revision,
        "counts_table": _counts_table(stats),
        "length_table": _length_table(stats),
        "build_notes": _notes(stats),
        **info.extra,
    }
    body = string.Template(_template_text(info)).safe_substitute(values)
    return f"---\n{meta}---\n\n{body.strip()}\n"
