"""Which data a score came from: a Hub repo at a resolved commit, a local benchmark folder by name and content
digest, the demo copy shipped in the package, or a benchmark built locally from its upstream release when our Hub
repo was missing (``complexir.hub.build_cache``).

Every result names its data this way (MTEB's ``dataset_revision``, the per-query files, the printed table), so a
demo number can never pass for a benchmark number, and results of two different builds are never mixed up.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from complexir.layout.card import read_front_matter

HUB, LOCAL, DEMO, UPSTREAM = "hub", "local", "demo", "upstream"
#: how results of demo data are labelled wherever people read them (report card, tables, charts, .eval_results):
#: ``complexir push`` refuses any file carrying it
DEMO_RESULTS_MARK = "[DEMO data, not benchmark scores]"
DEMO_REVISION_PREFIX = "complexir-demo-"
LOCAL_REVISION_PREFIX = "local-"
UPSTREAM_REVISION_PREFIX = "upstream-build-"
#: Beside a benchmark folder built from the upstream release (``<entry>/<folder>/``): what it was built from
UPSTREAM_BUILD_RECORD = "upstream-build.json"
_DIGEST = re.compile(r"content sha256 ([0-9a-f]+)")


@dataclass(frozen=True)
class DataProvenance:
    kind: str  # HUB, LOCAL, DEMO or UPSTREAM
    name: str  # the Hub repo id, or the benchmark folder's name
    version: str  # the resolved Hub commit, or the folder's content digest
    #: UPSTREAM only: ``<upstream repo>@<commit>`` of every upstream repo built from, and ``complexir <version>``
    built_from: str = ""
    builder: str = ""

    @property
    def revision(self) -> str:
        """What MTEB records as ``dataset_revision``: the commit for a Hub repo; for local data a name that no
        Hub revision can be (so MTEB never takes it for the published benchmark's)."""
        if self.kind == HUB:
            return self.version
        prefix = {DEMO: DEMO_REVISION_PREFIX, UPSTREAM: UPSTREAM_REVISION_PREFIX}.get(self.kind, LOCAL_REVISION_PREFIX)
        return f"{prefix}{self.name}-{self.version}"

    @property
    def is_demo(self) -> bool:
        return self.kind == DEMO

    def same_data_as(self, revision: str | None) -> bool:
        """Whether something recorded as made on ``revision`` (a result, a runs folder) was made on this data. Demo
        against demo counts as the same: a newer complexir may ship a changed demo."""
        return revision == self.revision or (self.is_demo and kind_of_revision(revision) == DEMO)

    def describe(self) -> str:
        if self.kind == HUB:
            return f"Hub dataset {self.name} at commit {self.version}"
        if self.kind == DEMO:
            return f"DEMO copy of {self.name} shipped in complexir (content sha256 {self.version})"
        if self.kind == UPSTREAM:
            return (f"built from {self.built_from} by {self.builder} (local cache, not a published Hub repo; "
                    f"{self.name} content sha256 {self.version})")
        return f"local folder {self.name} (content sha256 {self.version})"

    def as_dict(self) -> dict[str, str]:
        out = {**asdict(self), "revision": self.revision}
        if self.kind != UPSTREAM:
            del out["built_from"], out["builder"]
        return out


def kind_of_revision(revision: str | None) -> str | None:
    """HUB, LOCAL, DEMO or UPSTREAM from a recorded ``dataset_revision``; None when it names no data (e.g.
    ``"main"``)."""
    if not revision or revision in ("main", "unknown", "dataset revision not available"):
        return None
    if revision.startswith(DEMO_REVISION_PREFIX):
        return DEMO
    if revision.startswith(LOCAL_REVISION_PREFIX):
        return LOCAL
    if revision.startswith(UPSTREAM_REVISION_PREFIX):
        return UPSTREAM
    return HUB if re.fullmatch(r"[0-9a-f]{40}", revision) else None


def demo_root() -> Path:
    """The folder holding the demo benchmarks shipped inside the package."""
    return Path(str(importlib.resources.files("complexir") / "demo")).resolve()


def content_digest(folder: Path) -> str:
    """One digest of a benchmark folder's data: sha256 over the per-config digests its card records (the ones
    ``datasets`` caches on), in config order; 16 hex digits."""
    meta = read_front_matter(folder / "README.md")
    parts = []
    for config in meta.get("configs", []):
        match = _DIGEST.search(config.get("description", ""))
        if match is None:  # a folder built before cards carried digests: hash its files instead
            paths = sorted(p for df in config["data_files"] for p in folder.glob(df["path"]))
            digest = hashlib.sha256()
            for path in paths:
                digest.update(path.read_bytes())
            parts.append(f"{config['config_name']}={digest.hexdigest()[:16]}")
        else:
            parts.append(f"{config['config_name']}={match.group(1)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def built_from_upstream(upstream: dict[str, str], documents: dict[str, str] | None = None) -> str:
    """``<repo>@<commit>, ...`` of the upstream repos a build read, then the external document collections it
    read (``documents``: source -> version): ``; documents: <repo>@<commit>`` for a Hub dataset,
    ``<id> (ir_datasets <version>)`` for an ir_datasets one."""
    text = ", ".join(f"{repo}@{commit}" for repo, commit in upstream.items())
    if not documents:
        return text
    named = []
    for source, version in documents.items():
        kind, _, rest = source.partition(":")
        if kind == "hf":  # hf:<repo>[:<config>][?files=...|?splits=...]: which text of the repo was read, too
            head, _, select = rest.partition("?")
            repo, _, config = head.partition(":")
            parts = [f"config {config}"] if config else []
            parts += [part.replace("=", " ", 1).replace(",", ", ") for part in select.split("?") if part]
            named.append(f"{repo}@{version}" + (f" ({'; '.join(parts)})" if parts else ""))
        elif kind == "irds":
            named.append(f"{rest} (ir_datasets {version})")
        else:
            named.append(f"{source} at {version}")
    return f"{text}; documents: {', '.join(named)}"


def read_upstream_record(folder: str | Path) -> dict | None:
    """What a benchmark folder built from the upstream release was built from (the record beside it), else None."""
    record = Path(folder).parent / UPSTREAM_BUILD_RECORD
    if not record.is_file():
        return None
    return json.loads(record.read_text(encoding="utf-8"))


def of_local_folder(folder: str | Path) -> DataProvenance:
    folder = Path(folder).resolve()
    record = read_upstream_record(folder)
    if record is not None:
        return DataProvenance(UPSTREAM, folder.name, content_digest(folder),
                              built_from=built_from_upstream(record["upstream"], record.get("documents")),
                              builder=f"complexir {record['complexir']}")
    kind = DEMO if folder.parent == demo_root() else LOCAL
    return DataProvenance(kind, folder.name, content_digest(folder))


def of_hub_repo(repo_id: str, revision: str | None) -> DataProvenance:
    """The commit ``revision`` resolves to, from the Hub or, offline, from the local Hugging Face cache (the
    snapshot folder a download lands in is named by the commit)."""
    from huggingface_hub import hf_hub_download

    readme = Path(hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=revision))
    return DataProvenance(HUB, repo_id, readme.parent.name)


def of_source(path: str, revision: str | None) -> DataProvenance:
    """The provenance of a task's data source: a local folder (``revision`` None) or a Hub repo."""
    return of_local_folder(path) if revision is None and Path(path).is_dir() else of_hub_repo(path, revision)
