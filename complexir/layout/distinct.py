"""How many distinct texts (or other keys) among very many, in bounded memory.

mteb's ``unique_texts`` of a corpus, and the embedding store's count of a run's distinct texts, hold every text (or
every hash) at once: 0.9–2 GB for RAG 2024's 113.5M segments. ``DistinctKeys`` holds at most ``memory_keys`` keys
(16 bytes each); past that it sorts and deduplicates them into a run on disk, and :meth:`DistinctKeys.count` merges
the runs one hash range at a time. Nothing in numpy, pandas or pyarrow counts distinct values out of core, hence this
module.

Keys are 128-bit hashes (:func:`text_keys`; :func:`digest_keys` for hashes already computed): two texts count as one
only if both 64-bit halves collide, which for 113.5M texts has a probability below 1e-22.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np

#: a 128-bit key, compared (sorted) by its high half, then its low half
KEY = np.dtype([("hi", "<u8"), ("lo", "<u8")])
# pandas' SipHash keys (16 bytes each) for the two halves; any two different keys make independent halves
_HI_KEY, _LO_KEY = "complexir-text-a", "complexir-text-b"
RANGES = 4096  # the high half's space is cut into this many equal ranges; a count reads whole ranges at a time


def text_keys(texts: Sequence[str]) -> np.ndarray:
    """A 128-bit key per text: pandas' vectorised SipHash of its UTF-8 bytes under two keys (hi, lo)."""
    import pandas as pd

    values = np.asarray(texts, dtype=object)
    keys = np.empty(len(values), KEY)
    keys["hi"] = pd.util.hash_array(values, hash_key=_HI_KEY, categorize=False)
    keys["lo"] = pd.util.hash_array(values, hash_key=_LO_KEY, categorize=False)
    return keys


def digest_keys(digests: np.ndarray) -> np.ndarray:
    """Keys from the first 16 bytes of each row of an ``(n, >= 16)`` uint8 array of digests (SHA-256 and the like)."""
    return np.ascontiguousarray(digests[:, :16]).view(KEY).ravel()


class DistinctKeys:
    """The number of distinct keys ``add``-ed, in memory up to ``memory_keys`` keys, then in sorted runs under a
    temporary folder (in ``scratch_parent``, default the system's), which :meth:`close` removes (or, failing that,
    the garbage collector or the interpreter's exit)."""

    def __init__(self, *, memory_keys: int = 1 << 20, bucket_keys: int = 1 << 20,
                 scratch_parent: str | Path | None = None):
        self._memory_keys = memory_keys
        self._bucket_keys = bucket_keys
        self._scratch_parent = scratch_parent
        self._scratch: Path | None = None
        self._cleanup: weakref.finalize | None = None
        self._pending: list[np.ndarray] = []
        self._held = 0
        self._runs: list[tuple[Path, np.ndarray]] = []  # (file, start index of each range, then its length)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the runs (the count is lost)."""
        if self._cleanup is not None:
            self._cleanup()
            self._scratch = self._cleanup = None
        self._runs.clear()
        self._pending.clear()
        self._held = 0

    def add(self, keys: np.ndarray) -> None:
        if keys.dtype != KEY:
            raise TypeError(f"keys must have dtype {KEY}, not {keys.dtype}")
        if not len(keys):
            return
        self._pending.append(keys)
        self._held += len(keys)
        if self._held > self._memory_keys:
            self._compact()

    def _compact(self) -> None:
        """Deduplicate the keys held; if that leaves more than half the budget, write them out as a run."""
        unique = np.unique(np.concatenate(self._pending)) if self._pending else np.empty(0, KEY)
        self._pending, self._held = [unique], len(unique)
        if self._held * 2 <= self._memory_keys:
            return
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="complexir-distinct-", dir=self._scratch_parent))
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._scratch, ignore_errors=True)
        path = self._scratch / f"run-{len(self._runs):06d}.keys"
        unique.tofile(path)
        starts = np.searchsorted(unique["hi"], range_starts(), side="left")
        self._runs.append((path, np.append(starts, len(unique))))
        self._pending, self._held = [], 0

    def _buckets(self) -> Iterator[np.ndarray]:
        """Every key held or written, one group of whole hash ranges at a time (at most ``bucket_keys`` keys, or one
        range if that holds more)."""
        held = np.unique(np.concatenate(self._pending)) if self._pending else np.empty(0, KEY)
        held_starts = np.append(np.searchsorted(held["hi"], range_starts(), side="left"), len(held))
        sizes = np.diff(held_starts) + sum((np.diff(starts) for _, starts in self._runs), np.zeros(RANGES, int))
        first = 0
        while first < RANGES:
            last, size = first, 0
            while last < RANGES and (last == first or size + sizes[last] <= self._bucket_keys):
                size += int(sizes[last])
                last += 1
            parts = [held[held_starts[first]:held_starts[last]]]
            for path, starts in self._runs:
                lo, hi = int(starts[first]), int(starts[last])
                if hi > lo:
                    parts.append(np.fromfile(path, dtype=KEY, count=hi - lo, offset=lo * KEY.itemsize))
            yield np.concatenate(parts)
            first = last

    def count(self) -> int:
        """How many distinct keys were added."""
        return sum(len(np.unique(bucket)) for bucket in self._buckets())

    def keys(self) -> np.ndarray:
        """Every distinct key, in memory (for a small count: a Ray worker's shard)."""
        return np.concatenate([np.unique(bucket) for bucket in self._buckets()])

    def __getstate__(self) -> dict[str, Any]:
        # sent to another process (a Ray worker's counts to the driver): the keys themselves, not paths to its disk
        state = dict(self.__dict__, _pending=[self.keys()], _runs=[], _scratch=None, _cleanup=None)
        state["_held"] = len(state["_pending"][0])
        return state


def range_starts(ranges: int = RANGES) -> np.ndarray:
    """The first value of each of ``ranges`` equal ranges of the uint64 space."""
    return np.array([(k << 64) // ranges for k in range(ranges)], dtype=np.uint64)
