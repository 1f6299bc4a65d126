"""One resolver for every loading script: ``--source`` (a local folder or a Hub dataset id) → files on disk.

A local folder is read as it is (nothing is copied). Anything else is a Hub dataset repo id, fetched with
``huggingface_hub.snapshot_download`` at ``--revision`` (only the files ``allow_patterns`` names, when given).
A snapshot folder is named after the commit it holds, so a Hub build can record that exact commit.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from complexir.errors import UpstreamFormatError

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


def local_folder(source: str | Path, option: str = "--source") -> Path | None:
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
