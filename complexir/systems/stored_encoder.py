"""An MTEB encoder that serves vectors from the embedding store and encodes only the texts the store lacks.

It wraps the model as MTEB's own ``CachedEmbeddingWrapper`` does (``encode`` takes MTEB's dataloader, whose
dataset already holds each text as the model reads it: title and text joined, instruction appended), but keys
vectors by content (``complexir.systems.embedding_store``) instead of by task, so a text shared by tasks, runs or
processes
is encoded once. It counts, for the run: texts requested, distinct texts, texts encoded and texts served from
the store.
"""

from __future__ import annotations

import json
import logging
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models.abs_encoder import get_prompt_name
from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
from mteb.types import PromptType

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.models import EncoderProtocol
    from mteb.models.model_meta import ModelMeta

from complexir.layout.distinct import DistinctKeys, digest_keys
from complexir.systems.embedding_store import EmbeddingStore, StoreKey, text_hashes

logger = logging.getLogger(__name__)

DEFAULT_COMMIT_SIZE = 16_384  # texts per committed segment: what a killed run loses at most


@dataclass
class StoreCounts:
    """Texts requested, distinct, encoded and served from the store, over one run. Distinct texts are counted per
    store key by ``DistinctKeys`` (bounded memory: past a few million texts, sorted runs on disk)."""

    requested: int = 0
    encoded: int = 0
    _seen: dict[str, DistinctKeys] = field(default_factory=lambda: defaultdict(DistinctKeys))

    @property
    def served(self) -> int:
        return self.requested - self.encoded

    @property
    def unique(self) -> int:
        return sum(seen.count() for seen in self._seen.values())

    def note(self, digest: str, keys: np.ndarray) -> None:
        """Texts (their ``distinct.digest_keys``) requested under the store key ``digest``."""
        self._seen[digest].add(keys)

    def absorb(self, other: StoreCounts) -> StoreCounts:
        """Add another process's counts (a Ray worker's) to these."""
        self.requested += other.requested
        self.encoded += other.encoded
        for digest, seen in other._seen.items():
            self.note(digest, seen.keys())
        return self

    def summary(self) -> str:
        return (f"texts requested {self.requested:,}, unique {self.unique:,}, encoded {self.encoded:,}, "
                f"served from the store {self.served:,}")


def _unwrap(model: Any, cls: type, depth: int = 8, *, exact: bool = False) -> Any | None:
    """The first ``cls`` (with ``exact``: not a subclass) in a wrapper chain (``._model`` / ``.model``), or None."""
    for _ in range(depth):
        if (type(model) is cls) if exact else isinstance(model, cls):
            return model
        inner = getattr(model, "_model", None) or getattr(model, "model", None)
        if inner is None or inner is model:
            return None
        model = inner
    return None


def _max_length(model: Any) -> int | None:
    from sentence_transformers import SentenceTransformer

    st_model = _unwrap(model, SentenceTransformer)
    length = getattr(st_model, "max_seq_length", None) if st_model is not None else None
    return int(length) if length and math.isfinite(length) else None  # static embeddings have no limit (inf)


class StoredEncoder:
    """MTEB ``EncoderProtocol`` over ``model``, backed by an ``EmbeddingStore``."""

    def __init__(self, model: EncoderProtocol, store: EmbeddingStore, *, commit_size: int = DEFAULT_COMMIT_SIZE):
        self._model = model
        self.store = store
        self.commit_size = commit_size
        self.counts = StoreCounts()
        # exactly mteb's wrapper: a subclass (e.g. an instruction model) may shape inputs from the task metadata
        self._st_wrapper = _unwrap(model, SentenceTransformerEncoderWrapper, exact=True)
        self._max_length = _max_length(model)

    @property
    def mteb_model_meta(self) -> ModelMeta:
        return self._model.mteb_model_meta

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def key(self, task_metadata: TaskMetadata, prompt_type: PromptType | None) -> StoreKey:
        """The store key for texts of this task and prompt type.

        For a sentence-transformers model in mteb's own wrapper the prompt is the one that wrapper resolves from
        the model's prompts (so tasks without a prompt of their own share vectors); for any other encoder, which
        may shape its input from the task in ways not visible here, the task name and the task's prompt are part
        of the key (vectors are then shared across runs, not across tasks).
        """
        meta = self.mteb_model_meta
        if self._st_wrapper is not None:
            prompts = self._st_wrapper.model_prompts
            name = get_prompt_name(prompts, task_metadata, prompt_type)
            prompt = "prompt:" + ((prompts or {}).get(name) or "") if name else "prompt:"
        else:  # the task and its prompt (which wrappers such as CRUMB's set per subset) are part of the key
            task_prompt = json.dumps(task_metadata.prompt, sort_keys=True, default=str)
            prompt = f"task:{task_metadata.name}|{task_prompt}"
        return StoreKey(model=str(meta.name), revision=str(meta.revision), max_length=self._max_length,
                        prompt_type=prompt_type.value if prompt_type else None, prompt=prompt,
                        experiment=meta.experiment_name)

    def encode(self, inputs: Any, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
               prompt_type: PromptType | None = None, **kwargs: Any) -> Any:
        dataset = getattr(inputs, "dataset", None)
        columns = getattr(dataset, "column_names", None) or []
        if dataset is None or "text" not in columns or any(m in columns for m in ("image", "audio", "video")):
            logger.debug("embedding store: %s input is not plain text; encoding it directly", task_metadata.name)
            return self._model.encode(inputs, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                                      prompt_type=prompt_type, **kwargs)
        texts = dataset["text"]
        key = self.key(task_metadata, prompt_type)
        namespace = self.store.namespace(key)
        hashes = text_hashes(texts)
        # distinct texts of this call: each is looked up or encoded once, then fanned out
        _, first, inverse = np.unique(hashes, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        unique_hashes = hashes[first]
        self.counts.requested += len(texts)
        self.counts.note(key.digest(), digest_keys(unique_hashes))

        found, vectors = namespace.get(unique_hashes)
        if not found.all():
            namespace.refresh()  # another process may have encoded them meanwhile
            found, vectors = namespace.get(unique_hashes)
        missing = np.flatnonzero(~found)
        if len(missing):
            vectors = self._encode_missing(inputs, dataset, first, missing, unique_hashes, vectors, namespace,
                                           task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                                           prompt_type=prompt_type, **kwargs)
        return vectors[inverse]

    def _encode_missing(self, inputs: Any, dataset: Any, first: np.ndarray, missing: np.ndarray,
                        unique_hashes: np.ndarray, vectors: np.ndarray, namespace: Any, **encode_args: Any) -> Any:
        """Encode the missing texts ``commit_size`` at a time, committing each group to the store."""
        import torch
        from torch.utils.data import DataLoader

        for start in range(0, len(missing), self.commit_size):
            group = missing[start:start + self.commit_size]
            loader = DataLoader(dataset.select(first[group].tolist()), batch_size=inputs.batch_size,
                                collate_fn=inputs.collate_fn, shuffle=False)
            new = self._model.encode(loader, **encode_args)
            if isinstance(new, torch.Tensor):
                new = new.detach().cpu().float().numpy() if new.dtype == torch.bfloat16 else new.detach().cpu().numpy()
            new = np.asarray(new)
            if new.ndim != 2:
                raise ValueError(f"the embedding store holds one dense vector per text; the model returned shape "
                                 f"{new.shape}")
            namespace.add(unique_hashes[group], new)
            if vectors.shape[1] != new.shape[1]:  # nothing was found: the first vectors set the size
                vectors = np.empty((len(unique_hashes), new.shape[1]), dtype=new.dtype)
            elif vectors.dtype != new.dtype:
                vectors = vectors.astype(np.result_type(vectors, new))
            vectors[group] = new
            self.counts.encoded += len(group)
        return vectors

    def similarity(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self._model.similarity(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self._model.similarity_pairwise(embeddings1, embeddings2)
