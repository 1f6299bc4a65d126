"""One resolver for every loading script: ``--source`` (a local folder or a Hub dataset id) → files on disk.

A local folder is read as it is (nothing is copied). Anything else is a Hub dataset repo id, fetched with
``huggingface_hub.snapshot_download`` at ``--revision`` (only the files ``allow_patterns`` names, when given).
A snapshot folder is named after the commit it holds, so a Hub build can record that exact commit.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from complexir.layout.errors import UpstreamFormatError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Release:
    """An upstream release on disk, and where it came from."""

    root: Path  # the folder holding the release files
    source: str  # ``--source`` as given
    local: bool  # a local folder (True) or a Hub snapshot (False)
    requested_revision: str | None = None  # ``--revision`` as given
    commit: str | None = None  # the commit a Hub snapshot holds, when its folder names it

    @property
    def hub_revision(self) -> str:
        """What a card records for a Hub snapshot: its commit, else the revision asked for, else ``main``."""
        return self.commit or self.requested_revision or "main"

    def card_source(self, upstream: str) -> str:
        """How a card names this source: the Hub id, or a local folder by its name only (never this machine's
        path), in the format of the ``upstream`` Hub id."""
        return f"local folder {self.root.name!r} in the {upstream} format" if self.local else self.source

    def card_revision(self, files: Iterable[Path] | None = None) -> str:
        """What a card records as the revision: a Hub snapshot's commit; a local folder's content digest over
        ``files`` (default: every file under it), the same wherever the folder lives."""
        if not self.local:
            return self.hub_revision
        return content_digest(self.root, folder_files(self.root) if files is None else files)


def content_digest(folder: Path, files: Iterable[Path]) -> str:
    """``sha256:<16 hex>`` over each file's path relative to ``folder`` and its bytes, in the order given (read
    in blocks)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(Path(path).relative_to(folder).as_posix().encode("utf-8") + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()[:16]


def folder_files(folder: Path) -> list[Path]:
    """Every file under ``folder`` in a fixed order, hidden ones (``.git``, caches) left out."""
    return sorted(p for p in Path(folder).rglob("*")
                  if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def local_folder(source: str | os.PathLike[str], option: str = "--source") -> Path | None:
    """``source`` as a local folder, or ``None`` when it can only be a Hub dataset id.

    A path that exists but is not a folder, or that cannot be a Hub id (``./release``, ``/data/x``, ``a/b/c``),
    is an error here, so a mistyped local folder is reported as such, not as a Hub id format or cache error.
    """
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise NotADirectoryError(f"{option} {source}: not a folder (expected a local folder or a Hub repo id)")
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(str(source))
    except HFValidationError:
        raise FileNotFoundError(f"{option} {source}: no such folder (nor a valid Hub repo id)") from None
    return None


def hub_snapshot(repo_id: str, option: str = "--source", **kwargs: Any) -> Path:
    """``snapshot_download`` of the dataset repo ``repo_id`` (``kwargs`` passed on). When the repo is neither on
    the Hub nor in the cache, the error says that no local folder of that name exists either."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        return Path(snapshot_download(repo_id=repo_id, repo_type="dataset", **kwargs))
    except (LocalEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError) as error:
        reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
        raise FileNotFoundError(f"{option} {repo_id}: no such local folder, and not available as a Hub dataset "
                                f"({reason})") from error


def resolve_release(source: str | os.PathLike, revision: str | None = None, *,
                    allow_patterns: Sequence[str] | None = None, cache_dir: str | os.PathLike | None = None,
                    expected: str = "the release files") -> Release:
    """The release at ``source``: a local folder as is, else a Hub dataset snapshot at ``revision``.

    ``expected`` names what a local source must be, for the error when it is a file instead of a folder.
    """
    path = Path(source).expanduser()
    if path.exists() and not path.is_dir():
        raise UpstreamFormatError(path, None, f"expected a folder holding {expected}, or a Hub dataset id")
    folder = local_folder(source)  # a path that is no folder is named as such, not looked up on the Hub
    if folder is not None:
        return Release(folder.resolve(), str(source), local=True, requested_revision=revision)
    logger.info("downloading %s%s from the Hub", source, f" at {revision}" if revision else "")
    root = hub_snapshot(str(source), revision=revision, cache_dir=None if cache_dir is None else str(cache_dir),
                        allow_patterns=None if allow_patterns is None else list(allow_patterns))
    commit = root.name if root.parent.name == "snapshots" else None
    return Release(root, str(source), local=False, requested_revision=revision, commit=commit)
