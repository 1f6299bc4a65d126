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


def resolve_release(source: str | os.PathLike, revision: str | None = None, *,
                    allow_patterns: Sequence[str] | None = None, cache_dir: str | os.PathLike | None = None,
                    expected: str = "the release files") -> Release:
    """The release at ``source``: a local folder as is, else a Hub dataset snapshot at ``revision``.

    ``expected`` names what a local source must be, for the error when it is a file instead of a folder.
    """
    path = Path(source).expanduser()
    if path.is_dir():
        return Release(path.resolve(), str(source), local=True, requested_revision=revision)
    if path.exists():
        raise UpstreamFormatError(path, None, f"expected a folder holding {expected}, or a Hub dataset id")
    from huggingface_hub import snapshot_download

    logger.info("downloading %s%s from the Hub", source, f" at {revision}" if revision else "")
    root = Path(snapshot_download(repo_id=str(source), repo_type="dataset", revision=revision,
                                  cache_dir=None if cache_dir is None else str(cache_dir),
                                  allow_patterns=None if allow_patterns is None else list(allow_patterns)))
    commit = root.name if root.parent.name == "snapshots" else None
    return Release(root, str(source), local=False, requested_revision=revision, commit=commit)
