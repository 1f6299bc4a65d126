"""Document text kept outside a release: where it lives, and reading it as ``{id, title, text}`` rows.

A source is written ``irds:<ir_datasets id>``, ``hf:<repo>[@<revision>][:<config>]``, ``jsonl:<path>`` or
``trec:<path>`` (or bare: an existing file, an id ir_datasets knows, else a Hub dataset). Reading streams (bounded
memory); looking up a pool of ids uses ir_datasets' docstore when the source has one, else one scan that stops
early.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from complexir.errors import UpstreamFormatError
from complexir.upstream import iter_jsonl
from complexir.upstream.release import content_digest


@dataclass
class CorpusSource:
    """Where document text comes from: ``irds:<id>``, ``hf:<repo>[@<revision>][:<config>]``, ``jsonl:<path>``,
    ``trec:<path>``."""

    kind: str
    location: str
    config: str | None = None
    shown: str | None = None  # how the card names a local file: relative to the release folder, else name + digest
    revision: str | None = None  # a Hub dataset's revision (a build from the cache pins the commit its key names)

    def __str__(self) -> str:
        return (f"{self.kind}:{self.shown or self.location}" + (f"@{self.revision}" if self.revision else "")
                + (f":{self.config}" if self.config else ""))


def parse_corpus_source(spec: str, base: Path | None = None) -> CorpusSource:
    """A ``--docs`` value. Without a prefix: an existing file (``.jsonl[.gz]`` → JSONL, else TREC), an
    ir_datasets id ir_datasets knows, else a Hub dataset. Relative paths are tried against the working
    directory, then against the (local) upstream folder ``base``."""
    kind, _, rest = spec.partition(":")
    if kind in ("irds", "ir_datasets"):
        return CorpusSource("irds", rest)
    if kind in ("hf", "hub"):
        repo, _, config = rest.partition(":")
        repo, _, revision = repo.partition("@")  # a Hub id never holds "@"
        return CorpusSource("hf", repo, config or None, revision=revision or None)
    if kind in ("jsonl", "trec"):
        path = _local_path(rest, base)
        if not path.is_file():
            raise FileNotFoundError(f"--docs {spec}: {'not a file' if path.exists() else 'no such file'}")
        return CorpusSource(kind, str(path), shown=_shown(path, base))
    path = _local_path(spec, base)
    if path.exists():
        return CorpusSource("jsonl" if ".jsonl" in path.name else "trec", str(path), shown=_shown(path, base))
    import ir_datasets

    try:
        ir_datasets.registry[spec]
        return CorpusSource("irds", spec)
    except KeyError:
        pass
    if _looks_like_a_file(spec):  # a mistyped file name, not an id to look up on the Hub
        raise FileNotFoundError(f"--docs {spec}: no such file (nor an ir_datasets id)")
    return CorpusSource("hf", spec)


def _looks_like_a_file(spec: str) -> bool:
    """A ``--docs`` value that ir_datasets does not know and that can only mean a local file: a path (``./x``,
    ``/x``, ``~/x``), a name with a file suffix (``docs.jsonl``), or anything that is not a valid Hub id."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    if spec.startswith((".", "/", "~")) or re.search(r"\.(jsonl|json|trec|txt|tsv|csv|gz|xml)$", spec):
        return True
    try:
        validate_repo_id(spec)
    except HFValidationError:
        return True
    return False


def _local_path(text: str, base: Path | None) -> Path:
    path = Path(text).expanduser()
    if not path.is_absolute() and not path.exists() and base is not None and (base / path).exists():
        return base / path
    return path


def _shown(path: Path, base: Path | None) -> str:
    """A local corpus file as the card shows it: relative to the release folder when inside it, else its name
    and content digest (so a build's card does not depend on where the checkout lives)."""
    if base is not None:
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            pass
    if not path.is_file():
        return str(path)  # not found: the build stops on it, naming the path as given
    return f"{path.name} ({content_digest(path.parent, [path])})"  # never this machine's path


def _pick(row: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if row.get(name) is not None:
            return row[name]
    return None


ID_FIELDS = ("id", "doc_id", "docid", "_id", "pid")
TEXT_FIELDS = ("text", "contents", "content", "body", "passage", "segment")


def _row_from_mapping(row: dict[str, Any], where: str) -> dict[str, str]:
    doc_id, text = _pick(row, ID_FIELDS), _pick(row, TEXT_FIELDS)
    if doc_id is None or text is None:
        raise UpstreamFormatError(where, None, f"a document needs one of {ID_FIELDS} and one of {TEXT_FIELDS}; "
                                               f"got fields {sorted(row)}")
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        raise UpstreamFormatError(where, None, f"document id must be a string or an integer, got "
                                               f"{type(doc_id).__name__} {doc_id!r:.60}")
    title = row.get("title") or ""
    for name, value in (("text", text), ("title", title)):
        if not isinstance(value, str):  # str() of a list would store its Python repr as the text
            raise UpstreamFormatError(where, None, f"document {doc_id!r}: {name} must be a string, got "
                                                   f"{type(value).__name__} {value!r:.60}")
    return {"id": str(doc_id), "title": title, "text": text}


def _row_from_irds(doc: Any) -> dict[str, str]:
    """An ir_datasets doc namedtuple: its ``text`` field when it has one, else ``default_text()``."""
    title = getattr(doc, "title", "") or ""
    text = getattr(doc, "text", None)
    if not isinstance(text, str):
        text, title = doc.default_text(), ""  # default_text already includes the title
    return {"id": str(doc.doc_id), "title": str(title), "text": text}


def _irds_dataset(source: CorpusSource) -> Any:
    import ir_datasets

    try:
        dataset = ir_datasets.load(source.location)
    except KeyError:
        raise ValueError(f"ir_datasets does not know {source.location!r} (ir_datasets {ir_datasets.__version__}); "
                         f"upgrade ir_datasets or pass --docs SUBSET=<local JSONL/TREC file>") from None
    if not dataset.has_docs():
        raise ValueError(f"ir_datasets {source.location!r} has no documents")
    return dataset


def iter_documents(source: CorpusSource) -> Iterator[dict[str, str]]:
    """Every document of ``source``, streamed (bounded memory)."""
    if source.kind == "irds":
        for doc in _irds_dataset(source).docs_iter():
            yield _row_from_irds(doc)
    elif source.kind == "trec":
        import ir_datasets

        docs = ir_datasets.formats.TrecDocs(ir_datasets.util.LocalDownload(Path(source.location)), parser="text")
        for doc in docs.docs_iter():
            yield _row_from_irds(doc)
    elif source.kind == "jsonl":
        path = Path(source.location)
        for line, row in iter_jsonl(path):
            try:
                yield _row_from_mapping(row, str(path))
            except UpstreamFormatError as error:
                raise UpstreamFormatError(path, line, str(error).split(": ", 1)[-1]) from None
    elif source.kind == "hf":
        import datasets

        data = datasets.load_dataset(source.location, source.config, revision=source.revision, streaming=True)
        for split in sorted(data):
            for row in data[split]:
                yield _row_from_mapping(row, f"{source} split {split}")
    else:  # pragma: no cover - parse_corpus_source never makes another kind
        raise ValueError(f"unknown corpus source kind {source.kind!r}")


def pooled_documents(source: CorpusSource, wanted: set[str], progress: bool = True) -> list[dict[str, str]]:
    """The documents of ``wanted`` that ``source`` holds, sorted by id.

    ir_datasets sources are read through their docstore (``get_many``: a lookup, not a scan); other
    sources have no index, so they are scanned once, stopping when every wanted id was found.
    """
    found: dict[str, dict[str, str]] = {}
    if source.kind == "irds":
        store = _irds_dataset(source).docs_store()
        for doc_id, doc in store.get_many(sorted(wanted)).items():
            found[doc_id] = _row_from_irds(doc)
    else:
        bar = tqdm(iter_documents(source), desc=f"scanning {source}", unit="doc", disable=not progress,
                   mininterval=1.0)
        for number, row in enumerate(bar, 1):
            if row["id"] not in wanted:
                continue
            first = found.get(row["id"])
            if first is None:
                found[row["id"]] = row
                if len(found) == len(wanted):
                    break
            elif first != row:  # keeping either one silently would make the judgments point at unknown text
                raise UpstreamFormatError(str(source), None, f"document {row['id']!r} appears twice with different "
                                                             f"text or title (the second time as document {number})")
        bar.close()
    return [found[d] for d in sorted(found)]
