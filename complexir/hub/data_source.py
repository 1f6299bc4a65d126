"""Where MTEB tasks read built benchmarks: one local data dir (a folder per benchmark), or the Hub.

The entry points decide it once (``complexir run --data-dir``, the ``COMPLEXIR_DATA_DIR`` variable read by the
CLI and by the mteb hook for the plain ``mteb`` CLI) and hand the tasks a :class:`DataSource`; no task reads the
environment itself, so ``--data-dir hub`` means the Hub whatever the variable says.

On the Hub, a task whose repo is missing (not on the Hub, or offline and not in the Hugging Face cache) reads its
benchmark built from the upstream release instead (``complexir.hub.build_cache``, which the task hands in as
``upstream_build``): day one, before our repos are published, still gives real numbers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: the environment variable the entry points (never the tasks) read: a folder holding one folder per benchmark
DATA_DIR_ENV = "COMPLEXIR_DATA_DIR"
HUB = "hub"  # the --data-dir value that means the Hub


@dataclass(frozen=True)
class DataSource:
    """A local data dir holding ``<folder>/`` per benchmark, or (``data_dir is None``) the Hub repos named in
    the tasks' metadata."""

    data_dir: Path | None = None

    @classmethod
    def hub(cls) -> DataSource:
        return cls(None)

    @classmethod
    def local(cls, data_dir: str | os.PathLike) -> DataSource:
        folder = Path(data_dir).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(f"data dir {folder} does not exist")
        return cls(folder.resolve())

    @property
    def is_hub(self) -> bool:
        return self.data_dir is None

    def locate(self, folder: str, hub_id: str, revision: str | None, *, task: str = "",
               upstream_build: Callable[[], Path] | None = None) -> tuple[str, str | None]:
        """(local benchmark folder or Hub repo id, revision) of the benchmark whose folder name is ``folder``.

        On the Hub, when ``hub_id`` is missing and ``upstream_build`` is given, the folder it returns (the
        benchmark built from its upstream release), with revision None as for any local folder."""
        if self.data_dir is None:
            if upstream_build is not None and hub_repo_missing(hub_id, revision):
                return str(upstream_build()), None
            return hub_id, revision
        path = self.data_dir / folder
        if not path.is_dir():
            raise FileNotFoundError(f"{task + ': ' if task else ''}no benchmark folder {path} (data dir "
                                    f"{str(self.data_dir)!r}); {self._advice(folder)}")
        return str(path), None

    def _advice(self, folder: str) -> str:
        """What to do about a data dir without ``folder``: name its parent when it is a benchmark folder itself (the
        commonest slip), and never advise building into the installed package (its demos are read only)."""
        data_dir = self.data_dir
        assert data_dir is not None
        if (data_dir / "README.md").is_file() and (data_dir.name == folder or (data_dir / "data").is_dir()):
            return (f"{data_dir} is a benchmark folder itself: the data dir is the folder that holds the benchmark "
                    f"folders, here {data_dir.parent}")
        package = Path(__file__).resolve().parents[1]
        if data_dir == package / "demo" or package in data_dir.parents:
            return (f"the packaged demos hold {', '.join(sorted(p.name for p in (package / 'demo').iterdir()))}; "
                    f"build {folder} outside the installed package (`complexir build {folder} --out "
                    f"DIR/{folder}`) and use DIR as the data dir")
        return f"build it with `complexir build {folder} --out {data_dir / folder}`"

    def __str__(self) -> str:
        return "the Hub" if self.data_dir is None else str(self.data_dir)


def hub_repo_missing(repo_id: str, revision: str | None) -> bool:
    """Whether the dataset repo cannot be read: not on the Hub (404, or 401 for a private repo without access),
    or offline / the Hub unreachable and not in the Hugging Face cache. Its card is fetched to find out (the
    task reads it next anyway, from the cache). A gated repo is not missing: reading it says how to get access."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import GatedRepoError, LocalEntryNotFoundError, RepositoryNotFoundError

    try:
        hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=revision)
    except GatedRepoError:
        return False
    except (RepositoryNotFoundError, LocalEntryNotFoundError):
        return True
    return False


def choose_source(data_dir: str | None, environ: Mapping[str, str], default: Path | None) -> DataSource:
    """The entry points' one rule: ``data_dir`` as given (``"hub"``: the Hub), else ``$COMPLEXIR_DATA_DIR``, else
    ``default`` (a local folder; None: the Hub)."""
    if data_dir == HUB:
        return DataSource.hub()
    chosen = data_dir or environ.get(DATA_DIR_ENV)
    if chosen == HUB:
        return DataSource.hub()
    if chosen:
        return DataSource.local(chosen)
    return DataSource.local(default) if default is not None else DataSource.hub()
