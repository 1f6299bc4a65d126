"""Document text kept outside a release: where it lives, and reading it as ``{id, title, text}`` rows.

A source is written ``irds:<ir_datasets id>``, ``hf:<repo>[@<revision>][:<config>][?files=A,B|?splits=A,B]``,
``jsonl:<path>`` or ``trec:<path>`` (or bare: an existing file or folder, an id ir_datasets knows, else a Hub
dataset). A ``jsonl`` path may be a folder of (gzipped) JSON Lines shards, read in name order: the TREC RAG 2024
segmented MS MARCO v2.1 corpus as it is unpacked. ``?files=`` reads only those files of a Hub repo (as
``load_dataset(data_files=...)`` does), ``?splits=`` only those splits: so a repo that holds native and translated
text side by side (RAGTIME, NeuCLIR) is read one way, never both. Reading streams (bounded memory); looking up a pool
of ids uses ir_datasets' docstore when the source has one, else one scan.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from complexir.layout.errors import UpstreamFormatError
from complexir.upstream import iter_jsonl
from complexir.upstream.release import content_digest

logger = logging.getLogger(__name__)


@dataclass
class CorpusSource:
    """Where document text comes from: ``irds:<id>``, ``hf:<repo>[@<revision>][:<config>]``, ``jsonl:<path>``,
    ``trec:<path>``."""

    kind: str
    location: str
    config: str | None = None
    shown: str | None = None  # how the card names a local file: relative to the release folder, else name + digest
    revision: str | None = None  # a Hub dataset's revision (a build from the cache pins the commit its key names)
    files: tuple[str, ...] = ()  # a Hub dataset: only these files of the repo (``data_files``)
    splits: tuple[str, ...] = ()  # a Hub dataset: only these splits

    def __str__(self) -> str:
        select = (f"?files={','.join(self.files)}" if self.files else "") + \
            (f"?splits={','.join(self.splits)}" if self.splits else "")
        return (f"{self.kind}:{self.shown or self.location}" + (f"@{self.revision}" if self.revision else "")
                + (f":{self.config}" if self.config else "") + select)

    def local_paths(self) -> list[Path]:
        """The local files this source reads (a folder's shards in name order); none for irds/hf."""
        if self.kind not in ("jsonl", "trec"):
            return []
        path = Path(self.location)
        return shard_files(path) if path.is_dir() else [path]


#: what a folder of JSON Lines shards may hold (RAG 2024's shards are ``msmarco_v2.1_doc_segmented_NN.json.gz``)
SHARD_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz")


def shard_files(folder: Path) -> list[Path]:
    """The JSON Lines shards of ``folder``, in name order; a folder without any is an error naming it."""
    shards = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(SHARD_SUFFIXES)
                    and not p.name.startswith("."))
    if not shards:
        raise FileNotFoundError(f"--docs {folder}: a folder without JSON Lines shards (expected files ending in "
                                f"{', '.join(SHARD_SUFFIXES)})")
    return shards


def _hub_selection(rest: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """``<repo...>?files=a,b`` / ``?splits=a,b`` → (the part before, files, splits)."""
    head, _, query = rest.partition("?")
    files: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    for part in filter(None, query.split("?")):
        key, sep, value = part.partition("=")
        names = tuple(v for v in value.split(",") if v)
        if key == "files" and sep and names:
            files = names
        elif key == "splits" and sep and names:
            splits = names
        else:
            raise ValueError(f"--docs hf:{rest}: expected ?files=NAME,... or ?splits=NAME,..., got ?{part}")
    if files and splits:
        raise ValueError(f"--docs hf:{rest}: give ?files= or ?splits=, not both")
    return head, files, splits


def parse_corpus_source(spec: str, base: Path | None = None) -> CorpusSource:
    """A ``--docs`` value. Without a prefix: an existing file (``.jsonl[.gz]`` → JSONL, else TREC), an
    ir_datasets id ir_datasets knows, else a Hub dataset. Relative paths are tried against the working
    directory, then against the (local) upstream folder ``base``."""
    kind, _, rest = spec.partition(":")
    if kind in ("irds", "ir_datasets"):
        return CorpusSource("irds", rest)
    if kind in ("hf", "hub"):
        rest, files, splits = _hub_selection(rest)
        repo, _, config = rest.partition(":")
        repo, _, revision = repo.partition("@")  # a Hub id never holds "@"
        return CorpusSource("hf", repo, config or None, revision=revision or None, files=files, splits=splits)
    if kind in ("jsonl", "trec"):
        path = _local_path(rest, base)
        if kind == "jsonl" and path.is_dir():
            shard_files(path)  # a folder must hold shards
        elif not path.is_file():
            raise FileNotFoundError(f"--docs {spec}: {'not a file' if path.exists() else 'no such file'}")
        return CorpusSource(kind, str(path), shown=_shown(path, base))
    path = _local_path(spec, base)
    if path.is_dir():
        shard_files(path)
        return CorpusSource("jsonl", str(path), shown=_shown(path, base))
    if path.exists():
        return CorpusSource("jsonl" if ".jsonl" in path.name else "trec", str(path), shown=_shown(path, base))
    if irds_known(spec):
        return CorpusSource("irds", spec)
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
    if path.is_dir():  # a folder of shards: hashing tens of GB would cost a pass of its own; name and sizes
        shards = shard_files(path)
        return f"{path.name}/ ({len(shards)} shards, {sum(p.stat().st_size for p in shards):,} bytes)"
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


def irds_known(dataset_id: str) -> bool:
    """Whether the installed ir_datasets has ``dataset_id`` (without downloading anything)."""
    import ir_datasets

    try:
        ir_datasets.registry[dataset_id]
    except KeyError:
        return False
    return True


def iter_documents(source: CorpusSource) -> Iterator[dict[str, str]]:
    """Every document of ``source``, streamed (bounded memory)."""
    for _, row in _placed_documents(source):
        yield row


# TREC RAG 2024 segment ids name their shard: msmarco_v2.1_doc_<shard>_<offset>#<segment>_<offset>
_SEGMENT_ID = re.compile(r"msmarco_v2\.1_doc_(\d+)_\d+#\d+_\d+")
_SEGMENT_SHARD = re.compile(r"msmarco_v2\.1_doc_segmented_(\d+)\.json")


def _needed_shards(shards: list[Path], wanted: set[str] | None) -> list[Path]:
    """Of the segmented MS MARCO v2.1 shards, those that can hold ``wanted`` (a segment id names its shard);
    every shard when the ids or file names are not of that form."""
    if not wanted:
        return shards
    numbers = set()
    for doc_id in wanted:
        match = _SEGMENT_ID.fullmatch(doc_id)
        if match is None:
            return shards
        numbers.add(int(match.group(1)))
    named = {p: m for p in shards if (m := _SEGMENT_SHARD.fullmatch(p.name.removesuffix(".gz")))}
    if len(named) != len(shards):
        return shards
    return [p for p, m in named.items() if int(m.group(1)) in numbers]


def _placed_documents(source: CorpusSource, wanted: set[str] | None = None) -> Iterator[tuple[str, dict[str, str]]]:
    """(where, row) for each document: ``file:line`` for JSON Lines, the row number elsewhere. ``wanted`` may
    narrow which shards are read (never which rows are returned)."""
    if source.kind == "irds":
        for number, doc in enumerate(_irds_dataset(source).docs_iter(), 1):
            yield f"{source} document {number}", _row_from_irds(doc)
    elif source.kind == "trec":
        import ir_datasets

        path = Path(source.location)
        docs = ir_datasets.formats.TrecDocs(ir_datasets.util.LocalDownload(path), parser="text")
        number = 0
        for number, doc in enumerate(docs.docs_iter(), 1):
            yield f"{path} document {number}", _row_from_irds(doc)
        if number == 0:
            raise UpstreamFormatError(path, None, "holds no <DOC> records, so it is not a TREC document file (for "
                                                  "JSON Lines pass jsonl:<file>)")
    elif source.kind == "jsonl":
        for path in _needed_shards(source.local_paths(), wanted):
            for line, row in iter_jsonl(path):
                try:
                    yield f"{path}:{line}", _row_from_mapping(row, str(path))
                except UpstreamFormatError as error:
                    raise UpstreamFormatError(path, line, str(error).split(": ", 1)[-1]) from None
    elif source.kind == "hf":
        import datasets

        if source.files:  # single files, as ``load_dataset(repo, data_files=...)`` reads them
            for name in source.files:
                data = datasets.load_dataset(source.location, data_files=[name], revision=source.revision,
                                             split="train", streaming=True)
                for number, row in enumerate(data, 1):
                    yield f"{source.location} file {name} row {number}", _row_from_mapping(
                        row, f"{source.location} file {name} row {number}")
            return
        data = datasets.load_dataset(source.location, source.config, revision=source.revision, streaming=True)
        missing = [s for s in source.splits if s not in data]
        if missing:
            raise ValueError(f"{source}: no split {missing} (it has {sorted(data)})")
        for split in source.splits or sorted(data):
            for number, row in enumerate(data[split], 1):
                where = f"{source.location} split {split} row {number}"
                yield where, _row_from_mapping(row, where)
    else:  # pragma: no cover - parse_corpus_source never makes another kind
        raise ValueError(f"unknown corpus source kind {source.kind!r}")


def pooled_documents(source: CorpusSource, wanted: set[str], progress: bool = True) -> list[dict[str, str]]:
    """The documents of ``wanted`` that ``source`` holds, sorted by id.

    ir_datasets sources are read through their docstore (``get_many``: a lookup, not a scan). Other sources have
    no index and are scanned: local files to the end, so that an id given twice with different text is an error
    naming both places (keeping either would make the judgments point at unknown text); a Hub dataset stops when
    every wanted id was found.
    """
    found: dict[str, dict[str, str]] = {}
    if source.kind == "irds":
        store = _irds_dataset(source).docs_store()
        for doc_id, doc in store.get_many(sorted(wanted)).items():
            found[doc_id] = _row_from_irds(doc)
        return [found[d] for d in sorted(found)]
    first_at: dict[str, str] = {}
    stop_early = source.kind == "hf"
    bar = tqdm(_placed_documents(source, wanted), desc=f"scanning {source}", unit="doc", disable=not progress,
               mininterval=1.0)
    for where, row in bar:
        if row["id"] not in wanted:
            continue
        first = found.get(row["id"])
        if first is None:
            found[row["id"]] = row
            first_at[row["id"]] = where
            if stop_early and len(found) == len(wanted):
                break
        elif first != row:
            bar.close()
            raise UpstreamFormatError(where, None, f"document {row['id']!r} appears twice with different text or "
                                                   f"title: first at {first_at[row['id']]}, again here")
        else:
            logger.warning("%s: document %r appears again with the same text (first at %s)", where, row["id"],
                           first_at[row["id"]])
    bar.close()
    return [found[d] for d in sorted(found)]
