"""One benchmark folder's card, parsed once: configs, subsets, digests, zero-score queries and provenance.

The README's YAML front matter is the folder's table of contents (docs/layout.md). The
reader, the validator and the MTEB tasks each need parts of it; they ask one ``BenchmarkFolder`` instead of
parsing the YAML again. A task keeps the object it opened, so a run reads each card once per task.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from complexir.layout.card import ZERO_SCORE_KEY, read_front_matter
from complexir.layout.errors import LayoutError
from complexir.layout.schema import CORPUS, parse_config_name

README = "README.md"
#: the split ``datasets`` gives files listed without one (``data_files: x.parquet`` or a list of patterns)
UNNAMED_SPLIT = "train"
_DIGEST = re.compile(r"content sha256 ([0-9a-f]+)")  # as ``card.front_matter`` writes it into a description


@dataclass(frozen=True)
class Config:
    """One config of the card: a (subset, kind) pair and its files, split by split."""

    name: str
    subset: str | None
    kind: str
    data_files: dict[str, tuple[str, ...]]  # split -> path patterns, relative to the folder
    digest: str | None = None  # sha256 of its parquet files, when the card records it


@dataclass(frozen=True)
class BenchmarkFolder:
    """The parsed card of one benchmark: a local folder or a Hub dataset repo."""

    location: str  # an absolute local path, or a Hub repo id
    revision: str | None  # the Hub revision (None: a local folder, or the Hub's default branch)
    local: bool
    configs: dict[tuple[str | None, str], Config]  # (subset, kind) -> config, in card order
    zero_score_queries: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # subset -> split -> ids
    source_datasets: tuple[str, ...] = ()  # the upstream release the build came from
    metadata: Mapping[str, Any] = field(default_factory=dict)  # the whole front matter

    # -- opening --------------------------------------------------------------------------------------
    @classmethod
    def open(cls, source: str | os.PathLike, revision: str | None = None) -> BenchmarkFolder:
        """The benchmark at ``source``: an existing local folder, else a Hub dataset repo at ``revision``."""
        if Path(source).expanduser().exists():
            return cls.open_local(source)
        from huggingface_hub import hf_hub_download

        readme = Path(hf_hub_download(str(source), README, repo_type="dataset", revision=revision))
        return cls.from_metadata(read_front_matter(readme), str(source), revision=revision, local=False)

    @classmethod
    def open_local(cls, folder: str | os.PathLike) -> BenchmarkFolder:
        """The benchmark in a local ``folder`` (never the Hub: what the validator checks)."""
        readme = Path(folder).expanduser().resolve() / README
        if not readme.is_file():
            raise LayoutError(f"{readme}: missing (the card carries the configs list)")
        return cls.from_metadata(read_front_matter(readme), str(readme.parent), local=True)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], location: str, *, revision: str | None = None,
                      local: bool = True) -> BenchmarkFolder:
        """Parse a card's front matter (a mapping, as YAML gives it); errors name the card and the config."""
        readme = f"{location}/{README}"
        entries = metadata.get("configs")
        if not entries:
            raise LayoutError(f"{readme}: no 'configs' in the YAML front matter")
        if not isinstance(entries, list):
            raise LayoutError(f"{readme}: 'configs' must be a list of {{config_name, data_files}} entries (datasets "
                              f"reads no other form), got a {type(entries).__name__}")
        configs: dict[tuple[str | None, str], Config] = {}
        for i, entry in enumerate(entries, 1):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("config_name"), str):
                raise LayoutError(f"{readme}: configs entry {i} needs a 'config_name', got {entry!r:.80}")
            name = entry["config_name"]
            try:
                subset, kind = parse_config_name(name)
            except LayoutError as error:
                raise LayoutError(f"{readme}: {error}") from None
            if (subset, kind) in configs:
                raise LayoutError(f"{readme}: config {name!r} listed twice")
            digest = _DIGEST.search(str(entry.get("description") or ""))
            configs[subset, kind] = Config(name, subset, kind, _data_files(entry.get("data_files"), readme, name),
                                           digest.group(1) if digest else None)
        return cls(location, revision, local, configs, _zero_score_queries(metadata, readme),
                   _source_datasets(metadata), dict(metadata))

    # -- what the card announces ------------------------------------------------------------------------
    @property
    def readme(self) -> str:
        return f"{self.location}/{README}"

    @property
    def subsets(self) -> list[str | None]:
        """Subsets with a corpus, in card order (``None`` for a single unnamed subset)."""
        return [subset for subset, kind in self.configs if kind == CORPUS]

    def kinds(self, subset: str | None) -> dict[str, Config]:
        """kind -> config, for one subset."""
        return {kind: config for (s, kind), config in self.configs.items() if s == subset}

    @property
    def digests(self) -> dict[str, str]:
        """config name -> content digest, for the configs whose description records one."""
        return {c.name: c.digest for c in self.configs.values() if c.digest}

    # -- local files ------------------------------------------------------------------------------------
    def files(self, config: Config, *, links_within: Path | None = None) -> dict[str, list[Path]]:
        """split -> the files of one config of a local folder. Each split must match at least one file, and
        every pattern and match must stay inside the folder (no absolute path, no ``..``, no link out of
        ``links_within``, by default the folder itself)."""
        if not self.local:
            raise LayoutError(f"{self.location}: a Hub repo, not a local folder; download it to read its files")
        folder = Path(self.location)
        root = (links_within or folder).resolve()
        out: dict[str, list[Path]] = {}
        for split, patterns in config.data_files.items():
            where = f"config {config.name!r} split {split!r}"
            paths: set[Path] = set()
            for pattern in patterns:
                if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
                    raise LayoutError(f"{self.readme}: {where}: path {pattern!r} points outside the folder")
                for match in glob.glob(str(folder / pattern), recursive=True):
                    path = Path(match)
                    if not path.resolve().is_relative_to(root):
                        raise LayoutError(f"{self.readme}: {where}: {path} is a link to {path.resolve()}, "
                                          "outside the folder")
                    if path.is_file():
                        paths.add(path)
            if not paths:
                shown = patterns[0] if len(patterns) == 1 else list(patterns)
                raise LayoutError(f"{self.readme}: {where}: no file matches {shown!r}")
            out[split] = sorted(paths)
        return out

    def local_files(self, config: Config) -> dict[str, list[Path]]:
        """split -> the files of one config on this machine: a local folder's own, or for a Hub repo that config's
        files only, downloaded at this folder's revision (read from the cache when offline)."""
        if self.local:
            return self.files(config)
        from huggingface_hub import snapshot_download

        patterns = sorted({p for split_patterns in config.data_files.values() for p in split_patterns})
        snapshot = Path(snapshot_download(self.location, repo_type="dataset", revision=self.revision,
                                          allow_patterns=patterns))
        # the cache's snapshot folders hold links to its blobs (snapshots/<commit>/... -> ../../blobs/<hash>)
        return dataclasses.replace(self, location=str(snapshot), local=True).files(
            config, links_within=snapshot.parent.parent)

    def corpus_files(self, subset: str | None) -> list[Path]:
        """The parquet shards of one subset's corpus config (its single split), on this machine."""
        config = self.configs.get((subset, CORPUS))
        if config is None:
            raise LayoutError(f"{self.readme}: no corpus config for subset {subset!r}")
        files = self.local_files(config)
        if len(files) != 1:
            raise LayoutError(f"{self.readme}: config {config.name!r} has splits {sorted(files)}; a corpus has one")
        return next(iter(files.values()))


def _data_files(value: Any, readme: str, name: str) -> dict[str, tuple[str, ...]]:
    """A config's ``data_files``, in any form the Hub accepts, as split -> patterns.

    ``x.parquet`` or ``[a, b]`` (no split: ``datasets`` names it ``train``), or a list of ``{split, path}`` whose
    path is one pattern or a list of them; a split listed twice gathers its patterns.
    """
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise LayoutError(f"{readme}: config {name!r}: 'data_files' must be a pattern or a non-empty list, "
                          f"got {value!r:.80}")
    out: dict[str, list[str]] = {}
    for item in value:
        if isinstance(item, str):
            split, paths = UNNAMED_SPLIT, [item]
        elif isinstance(item, Mapping) and isinstance(item.get("split"), str) and "path" in item:
            split, paths = item["split"], item["path"] if isinstance(item["path"], list) else [item["path"]]
        else:
            raise LayoutError(f"{readme}: config {name!r}: each data_files entry needs 'split' and 'path' "
                              f"(or is a pattern), got {item!r:.80}")
        if not paths or not all(isinstance(p, str) and p for p in paths):
            raise LayoutError(f"{readme}: config {name!r} split {split!r}: 'path' must name files, got {paths!r:.80}")
        out.setdefault(split, []).extend(paths)
    return {split: tuple(dict.fromkeys(paths)) for split, paths in out.items()}


def _zero_score_queries(metadata: Mapping[str, Any], readme: str) -> dict[str, dict[str, list[str]]]:
    """The card's ``complexir: {zero_score_queries: {subset: {split: [ids]}}}``, checked for shape."""
    block = metadata.get("complexir") or {}
    listed = block.get(ZERO_SCORE_KEY) if isinstance(block, Mapping) else None
    if listed is None:
        return {}
    if not isinstance(listed, Mapping) or not all(
            isinstance(splits, Mapping) and all(isinstance(ids, list) for ids in splits.values())
            for splits in listed.values()):
        raise LayoutError(f"{readme}: complexir.{ZERO_SCORE_KEY} must map subset -> split -> [query ids]")
    return {str(subset): {str(split): [str(i) for i in ids] for split, ids in splits.items()}
            for subset, splits in listed.items()}


def _source_datasets(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    sources = metadata.get("source_datasets") or ()
    return (str(sources),) if isinstance(sources, str) else tuple(str(s) for s in sources)
