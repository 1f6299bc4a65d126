"""Which data a score came from: a Hub repo at a resolved commit, a local benchmark folder by name and content
digest, or the demo copy shipped in the package.

Every result names its data this way (MTEB's ``dataset_revision``, the per-query files, the printed table), so a
demo number can never pass for a benchmark number, and results of two different builds are never mixed up.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from .card import read_front_matter

HUB, LOCAL, DEMO = "hub", "local", "demo"
DEMO_REVISION_PREFIX = "complexir-demo-"
LOCAL_REVISION_PREFIX = "local-"
_DIGEST = re.compile(r"content sha256 ([0-9a-f]+)")


@dataclass(frozen=True)
class DataProvenance:
    kind: str  # HUB, LOCAL or DEMO
    name: str  # the Hub repo id, or the benchmark folder's name
    version: str  # the resolved Hub commit, or the folder's content digest

    @property
    def revision(self) -> str:
        """What MTEB records as ``dataset_revision``: the commit for a Hub repo; for local data a name that no
        Hub revision can be (so MTEB never takes it for the published benchmark's)."""
        if self.kind == HUB:
            return self.version
        prefix = DEMO_REVISION_PREFIX if self.kind == DEMO else LOCAL_REVISION_PREFIX
        return f"{prefix}{self.name}-{self.version}"

    @property
    def is_demo(self) -> bool:
        return self.kind == DEMO

    def describe(self) -> str:
        if self.kind == HUB:
            return f"Hub dataset {self.name} at commit {self.version}"
        if self.kind == DEMO:
            return f"DEMO copy of {self.name} shipped in complexir (content sha256 {self.version})"
        return f"local folder {self.name} (content sha256 {self.version})"

    def as_dict(self) -> dict[str, str]:
        return {**asdict(self), "revision": self.revision}


def kind_of_revision(revision: str | None) -> str | None:
    """HUB, LOCAL or DEMO from a recorded ``dataset_revision``; None when it names no data (e.g. ``"main"``)."""
    if not revision or revision in ("main", "unknown", "dataset revision not available"):
        return None
    if revision.startswith(DEMO_REVISION_PREFIX):
        return DEMO
    if revision.startswith(LOCAL_REVISION_PREFIX):
        return LOCAL
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


def of_local_folder(folder: str | Path) -> DataProvenance:
    folder = Path(folder).resolve()
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
