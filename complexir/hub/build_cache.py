"""Day one without our Hub repos: a benchmark built from its upstream release, once, into a local cache.

When a task's standard-layout repo (``complexir/<benchmark>``) is not on the Hub (or, offline, not in the Hugging
Face cache), the task reads this instead: the benchmark's own loading script run on the upstream release
(``BenchmarkSpec.upstream``) at its resolved commit, exactly as ``complexir build`` runs it, for the subsets the
task needs. A build lives in

    $COMPLEXIR_CACHE/<folder>/<repo>@<commit>[+<repo>@<commit>][+documents-<digest>]/complexir-<version>/<subsets>/
        <folder>/             the benchmark folder (a data dir's entry: what ``--data-dir`` would hold)
        upstream-build.json   what it was built from (complexir.hub.provenance reads it)
        last-used             its modification time: when a task last read the entry (``complexir cache list``)

(default ``$HF_HOME/complexir``). The key holds every upstream repo and commit, so a new upstream commit is a new
build and an old one is never read for it, and the complexir version, whose builders may write other data. Where a
benchmark's documents live outside its release (CoverageBench's collections, ``SubsetSpec.documents``), the key
holds their versions too, as a digest (``+documents-<digest>``; the record lists them in full): a Hub dataset by the
commit its ``main`` is at, which the build then reads pinned; an ir_datasets collection by the installed ir_datasets
version and the dataset id (ir_datasets has no per-dataset version to ask: each of its releases fixes a dataset's
download URLs and checksums, so an ir_datasets upgrade is a new build). An
entry appears in one rename of a finished folder (``complexir.layout.atomic``), so a build that fails or is killed
leaves
no entry to read (its hidden ``.<subsets>.partial-*`` folder is removed by the next build); builds run under a file
lock, so two processes racing build once and the second reads what the first built. Offline, the newest complete
entry is read without asking the Hub for the upstream commit.

The loading scripts are named by import path in the spec registry and imported only when a build runs.
``complexir cache list|prune|clear`` (``complexir.hub.cache_admin``) shows entries and deletes them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from complexir.hub.provenance import UPSTREAM_BUILD_RECORD, built_from_upstream, read_upstream_record
from complexir.layout import atomic
from complexir.registry.benchmarks import BenchmarkSpec
from complexir.upstream.options import BuildOptions

if TYPE_CHECKING:
    from huggingface_hub import HfApi

logger = logging.getLogger(__name__)

#: where builds from the upstream releases are kept (default: ``complexir`` under the Hugging Face home)
CACHE_ENV = "COMPLEXIR_CACHE"
PARTIAL = "partial"
#: in an entry: an empty file whose modification time is when a task last read the entry
LAST_USED = "last-used"


def cache_root() -> Path:
    """``$COMPLEXIR_CACHE``, else ``complexir/`` in the Hugging Face home (``$HF_HOME``, ~/.cache/huggingface)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "complexir"


def complexir_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("complexir")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "unknown"


def no_release_message(spec: BenchmarkSpec) -> str:
    return (f"{spec.hub_id} is not on the Hub, and {spec.name} has no release complexir knows how to read: build it "
            f"from your pair files with `complexir build {spec.folder} --source PAIRS --out DATA/{spec.folder}`, "
            f"then run with --data-dir DATA (or COMPLEXIR_DATA_DIR=DATA)")


def _subsets_key(subsets: Sequence[str]) -> str:
    return "+".join(subsets) if subsets else "all"


def _upstream_key(commits: dict[str, str], documents: dict[str, str] | None = None) -> str:
    """``<repo>@<commit>[+...]``, then ``+documents-<digest>`` of the document collections' versions: a digest,
    because seven collections with their commits would pass the 255 bytes a folder name may have."""
    key = "+".join(f"{repo.replace('/', '--')}@{commit}" for repo, commit in commits.items())
    if documents:
        digest = hashlib.sha256(json.dumps(documents, sort_keys=True).encode()).hexdigest()[:16]
        key += f"+documents-{digest}"
    return key


def entry_path(spec: BenchmarkSpec, commits: dict[str, str], subsets: Sequence[str],
               documents: dict[str, str] | None = None) -> Path:
    """The cache entry of ``spec``'s ``subsets`` built from the upstream ``commits`` (repo id -> commit) and the
    document collections at ``documents`` (source -> version, :func:`collection_versions`)."""
    return (cache_root() / spec.folder / _upstream_key(commits, documents) / f"complexir-{complexir_version()}"
            / _subsets_key(subsets))


def lock_path(entry: Path) -> Path:
    """The build lock of ``entry``: held while it is built, and by ``complexir cache`` while it is removed."""
    return entry.parent / f".{entry.name}.lock"


def mark_used(entry: Path) -> None:
    """Stamp ``entry`` as read now: the modification time of an empty file in it, since file access times are
    often not kept (noatime, relatime mounts)."""
    try:
        (entry / LAST_USED).touch()
    except OSError:  # a read-only cache, or the entry pruned meanwhile: the read itself is what matters
        pass


def _complete(entry: Path, spec: BenchmarkSpec) -> bool:
    return (entry / UPSTREAM_BUILD_RECORD).is_file() and (entry / spec.folder).is_dir()


def newest_cached(spec: BenchmarkSpec, subsets: Sequence[str]) -> Path | None:
    """The benchmark folder of the most recently finished entry for these subsets (any upstream commit, this
    complexir version), found on disk alone: what an offline run reads."""
    pattern = f"*/complexir-{complexir_version()}/{_subsets_key(subsets)}"
    entries = [e for e in (cache_root() / spec.folder).glob(pattern) if _complete(e, spec)]
    if not entries:
        return None
    newest = max(entries, key=lambda e: (read_upstream_record(e / spec.folder) or {})["built_at"])  # _complete
    mark_used(newest)
    return newest / spec.folder


def upstream_commits(spec: BenchmarkSpec) -> dict[str, str]:
    """The commit each upstream repo's ``main`` is at now (one Hub API call per repo)."""
    from huggingface_hub import HfApi

    api = HfApi()
    return {repo: _main_commit(api, repo) for repo in spec.upstream}


def _main_commit(api: HfApi, repo: str) -> str:
    sha = api.dataset_info(repo).sha
    if sha is None:  # the Hub names a repo's head commit; without one the cache would be keyed on nothing
        raise RuntimeError(f"the Hub gave no commit for dataset {repo}")
    return sha


def document_collections(spec: BenchmarkSpec, subsets: Sequence[str]) -> tuple[str, ...]:
    """The external document collections (``SubsetSpec.documents``: ``hf:<repo>[:<config>]``, ``irds:<id>``) that
    a build of ``subsets`` (every subset when empty) reads, each once, in spec order."""
    chosen = set(subsets)
    return tuple(dict.fromkeys(s.documents for s in spec.subsets
                               if s.documents and (not chosen or s.name in chosen)))


def _ir_datasets_version() -> str:
    from importlib.metadata import version

    return version("ir_datasets")


def collection_versions(collections: Sequence[str]) -> dict[str, str]:
    """Source -> what it is at now: a Hub dataset's ``main`` commit (one Hub API call, as for the upstream repos);
    an ir_datasets collection's installed ir_datasets version (the id is in the source; see the module docstring)."""
    from huggingface_hub import HfApi

    versions: dict[str, str] = {}
    for source in collections:
        kind, _, rest = source.partition(":")
        if kind == "hf":  # hf:<repo>[:<config>][?files=...|?splits=...]: the repo's commit
            versions[source] = _main_commit(HfApi(), rest.partition("?")[0].partition(":")[0])
        elif kind == "irds":
            versions[source] = _ir_datasets_version()
        else:  # the spec names the public collections; a local file has no place there
            raise ValueError(f"document collection {source!r}: expected hf:<repo>[:<config>][?...] or irds:<id>")
    return versions


def options_class(module: ModuleType) -> type[BuildOptions]:
    """The options a loading script's ``build`` takes: its ``OPTIONS``, else :class:`BuildOptions`."""
    return getattr(module, "OPTIONS", BuildOptions)


def run_build(build: Callable[[Any], int], options: BuildOptions, describe: Callable[[Path], object]) -> int:
    """A loading script's ``build(options)``, with ``describe(folder)`` (mteb's descriptive statistics) run on the
    finished folder before it is put in place: the script hands ``options.before_swap`` to its
    ``BenchmarkWriter``. One that does not (a benchmark registered from another package, written before this) gets
    it run after the swap."""
    called = []

    def before_swap(folder: Path) -> None:
        called.append(folder)
        describe(folder)

    code = build(dataclasses.replace(options, before_swap=before_swap))
    if code == 0 and not called:
        logger.warning("%s does not pass options.before_swap to its BenchmarkWriter: the descriptive statistics are "
                       "written after the folder is in place", getattr(build, "__module__", build))
        describe(Path(options.out))
    return code


def _source_options(module: ModuleType, spec: BenchmarkSpec, commits: dict[str, str]) -> dict[str, Any]:
    """The loading script's options naming the upstream repos at exactly ``commits``: its own
    ``pinned_source(commits)`` where it reads several repos, else ``source=REPO, revision=COMMIT``."""
    pinned = getattr(module, "pinned_source", None)
    if pinned is not None:
        return dict(pinned(commits))
    if len(commits) != 1:
        raise ValueError(f"{spec.loading_script} reads {len(commits)} upstream repos but has no "
                         "pinned_source(commits) to name their commits")
    (repo, commit), = commits.items()
    return {"source": repo, "revision": commit}


def _progress() -> bool:
    from huggingface_hub.utils import are_progress_bars_disabled

    return not are_progress_bars_disabled()


def _document_options(module: ModuleType, spec: BenchmarkSpec, documents: dict[str, str]) -> dict[str, Any]:
    """The loading script's options reading the Hub document collections at exactly the commits of
    ``documents``: its ``pinned_documents(documents)``. ir_datasets collections need none (the installed
    ir_datasets is the version the key names)."""
    if not any(source.startswith("hf:") for source in documents):
        return {}
    pinned = getattr(module, "pinned_documents", None)
    if pinned is None:
        raise ValueError(f"{spec.loading_script} reads Hub document collections but has no "
                         "pinned_documents(documents) to read them at the commits the cache key names")
    return dict(pinned(documents))


def _run_loading_script(spec: BenchmarkSpec, out: Path, commits: dict[str, str], subsets: Sequence[str],
                        documents: dict[str, str], describe: Callable[[Path], object]) -> None:
    """The loading script's ``build`` on ``out``, reading the upstream ``commits`` and ``documents``, as
    ``complexir build <folder> --out OUT --source ... [--subset ...]`` runs it."""
    module = import_module(spec.loading_script)
    options = options_class(module)(out=out, **_source_options(module, spec, commits),
                                    **_document_options(module, spec, documents),
                                    subsets=tuple(subsets) or None, progress=_progress())
    run_build(module.build, options, describe)


def _build(spec: BenchmarkSpec, commits: dict[str, str], documents: dict[str, str], subsets: Sequence[str],
           entry: Path, describe: Callable[[Path], object] | None) -> None:
    """Build into a hidden sibling of ``entry``, record what it was built from, and rename it into place."""
    partial = atomic.sibling(entry, PARTIAL)
    partial.mkdir()
    try:
        out = partial / spec.folder
        _run_loading_script(spec, out, commits, subsets, documents, describe or (lambda folder: None))
        record = {"benchmark": spec.name, "upstream": commits, "documents": documents, "subsets": list(subsets),
                  "complexir": complexir_version(), "built_at": time.time()}
        (partial / UPSTREAM_BUILD_RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")

        def taken(target: Path) -> None:  # under the lock no one else writes the entry
            raise FileExistsError(f"{target} appeared while this process held its build lock")

        atomic.replace_folder(partial, entry, taken)
    except BaseException:
        problem = atomic.remove_tree(partial)
        if problem:
            logger.error("could not delete the unfinished build %s (%s); delete it by hand", partial, problem)
        raise


def _remove_unfinished(entry: Path) -> None:
    """Delete the hidden partial builds beside ``entry``: called under the build lock, when no live build of this
    entry exists, so any left are a killed process's."""
    for leftover in entry.parent.glob(f".{entry.name}.{PARTIAL}-*"):
        logger.info("removing %s, left by a build that did not finish", leftover)
        problem = atomic.remove_tree(leftover)
        if problem:
            logger.warning("could not delete %s (%s)", leftover, problem)


def ensure_built(spec: BenchmarkSpec, subsets: Sequence[str] = (), *,
                 describe: Callable[[Path], object] | None = None) -> Path:
    """The folder of ``spec`` (only ``subsets``, every one when empty) built from the upstream release at its
    current commit, building it first if no process has yet; offline, the newest build in the cache.

    ``describe(folder)`` runs on a new build before it is put in place (``complexir build`` adds mteb's
    descriptive statistics there). Errors are one line saying what to do.
    """
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    if not spec.upstream:
        raise FileNotFoundError(no_release_message(spec))
    subsets = tuple(subsets)
    what = f"{spec.name}" + (f" ({', '.join(subsets)})" if subsets else "")
    if constants.HF_HUB_OFFLINE:
        cached = newest_cached(spec, subsets)
        if cached is None:
            raise FileNotFoundError(
                f"{spec.hub_id} is not in the Hugging Face cache and no build of {what} from "
                f"{', '.join(spec.upstream)} is in {cache_root() / spec.folder} (HF_HUB_OFFLINE is set): run once "
                f"online to build it, or build it with `complexir build {spec.folder}` and pass --data-dir")
        return cached
    collections = document_collections(spec, subsets)
    commits: dict[str, str] = {}
    try:
        commits = upstream_commits(spec)
        documents = collection_versions(collections)
    except RepositoryNotFoundError as error:
        if commits:  # the release is there; a document collection is not
            raise FileNotFoundError(
                f"the documents of {what} come from the Hub dataset {error.repo_id or ', '.join(collections)}, which "
                f"is not on the Hub for this token (some collections ask you to accept their terms first): build "
                f"{spec.name} with `complexir build {spec.folder} --docs SUBSET=FILE ... --out DATA/{spec.folder}` "
                "and pass --data-dir DATA") from error
        raise FileNotFoundError(
            f"neither {spec.hub_id} nor its upstream release {error.repo_id or ', '.join(spec.upstream)} is on the "
            f"Hub for this token: build {spec.name} from a local copy with `complexir build {spec.folder} --source "
            f"DIR --out DATA/{spec.folder}` and pass --data-dir DATA") from error
    except HfHubHTTPError:
        raise
    except Exception:  # the Hub unreachable (the HTTP client's connection errors): a build made earlier will do
        cached = newest_cached(spec, subsets)
        if cached is None:
            raise
        logger.warning("the Hub is unreachable: reading the build of %s in %s", what, cached.parent)
        return cached
    entry = entry_path(spec, commits, subsets, documents)
    if not _complete(entry, spec):
        entry.parent.mkdir(parents=True, exist_ok=True)
        from filelock import FileLock

        with FileLock(str(lock_path(entry))):
            if not _complete(entry, spec):  # another process may have built it while this one waited
                _remove_unfinished(entry)
                logger.warning("%s is not on the Hub: building %s from %s once, into %s", spec.hub_id, what,
                               built_from_upstream(commits, documents), entry)
                _build(spec, commits, documents, subsets, entry, describe)
    mark_used(entry)
    return entry / spec.folder
