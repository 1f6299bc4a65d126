"""Content-addressed embedding store: a text is encoded once per model, whatever task, run or process asks for it.

MTEB's ``CachedEmbeddingWrapper`` keys its vectors by task, so a document held by five tasks is encoded five
times, and its numpy memmap is rewritten in place (a killed run can leave a half-written vector behind). Here a
vector is keyed by what determines it: the model (name, revision), its max sequence length, the prompt it is
encoded with (query or document, and the prompt text the model's wrapper resolves for the task) and the SHA-256
of the text exactly as the model reads it.

Layout on disk::

    <root>/<key digest>/key.json          the key's fields, for people and for checks
    <root>/<key digest>/seg-<id>.arrow     Arrow IPC files, columns ``hash`` (32 bytes) and ``vector``

Segments are append-only and written whole: to a temporary file in the same folder, fsync'ed, then renamed into
place (``os.replace`` is atomic on POSIX) and the folder fsync'ed. Readers only ever open ``seg-*.arrow``, so a
run killed midway leaves at worst a ``.tmp-*`` file nobody reads; a segment that still fails to open (a damaged
disk) is skipped with a warning and its texts are encoded again. Every served vector is checked against its full
hash. Other processes (Ray workers, a later run) see new segments on ``refresh``; each process keeps only an index
of 8-byte hash prefixes in memory (16 bytes per stored vector) and reads vectors segment by segment.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

logger = logging.getLogger(__name__)

HASH_BYTES = 32
KEY_FILE = "key.json"
SEGMENT_PREFIX = "seg-"
SEGMENT_SUFFIX = ".arrow"
TMP_PREFIX = ".tmp-"


def text_hashes(texts: list[str]) -> np.ndarray:
    """SHA-256 of each text (UTF-8), as an ``(n, 32)`` uint8 array."""
    out = np.empty((len(texts), HASH_BYTES), dtype=np.uint8)
    for i, text in enumerate(texts):
        out[i] = np.frombuffer(hashlib.sha256(text.encode("utf-8")).digest(), dtype=np.uint8)
    return out


def _prefixes(hashes: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each hash as one uint64: the in-memory index key."""
    return np.ascontiguousarray(hashes[:, :8]).view("<u8").ravel()


@dataclass(frozen=True)
class StoreKey:
    """Everything besides the text that determines a vector."""

    model: str
    revision: str
    max_length: int | None
    prompt_type: str | None
    prompt: str
    # what else about the encoder changes its vectors (mteb's experiment name, e.g. "backend_onnx"); None: nothing,
    # and then left out of the digest, so stores written before the field existed stay valid
    experiment: str | None = None

    def digest(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if not (k == "experiment" and v is None)}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomically(path: Path, write: Any) -> None:
    """``write(file)`` into a temporary file beside ``path``, fsync, rename into place, fsync the folder."""
    tmp = path.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}{path.suffix}"
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    _fsync_dir(path.parent)


class Namespace:
    """The vectors of one ``StoreKey``: append-only segments plus an in-memory prefix index."""

    def __init__(self, folder: Path, key: StoreKey):
        self.folder = folder
        self.key = key
        folder.mkdir(parents=True, exist_ok=True)
        key_file = folder / KEY_FILE
        if not key_file.exists():
            payload = json.dumps(asdict(key), indent=1, sort_keys=True).encode()
            _write_atomically(key_file, lambda f: f.write(payload))
        self.segments: list[Path] = []
        self._known: set[str] = set()
        self._prefix = np.empty(0, dtype="<u8")  # sorted
        self._segment = np.empty(0, dtype=np.int32)
        self._row = np.empty(0, dtype=np.int64)
        self.dim: int | None = None
        self.refresh()

    def __len__(self) -> int:
        return len(self._prefix)

    def refresh(self) -> int:
        """Index the segments written since the last look (by this or any other process); returns how many."""
        new = sorted(p for p in self.folder.glob(f"{SEGMENT_PREFIX}*{SEGMENT_SUFFIX}") if p.name not in self._known)
        parts = []
        for path in new:
            self._known.add(path.name)
            try:
                hashes, dim = self._read_segment_hashes(path)
            except (pa.ArrowException, OSError, ValueError) as err:
                logger.warning("embedding store: skipping unreadable segment %s (%s); its texts will be encoded", path,
                               err)
                continue
            if self.dim is not None and dim != self.dim:
                logger.warning("embedding store: skipping %s: vectors of size %d, the store holds %d", path, dim,
                               self.dim)
                continue
            self.dim = dim
            self.segments.append(path)
            parts.append((len(self.segments) - 1, hashes))
        if parts:
            self._add_to_index(parts)
        return len(parts)

    @staticmethod
    def _read_segment_hashes(path: Path) -> tuple[np.ndarray, int]:
        with pa.memory_map(str(path)) as source:
            table = ipc.open_file(source).read_all()
            hash_col, vector_col = table.column("hash"), table.column("vector")
            if hash_col.type != pa.binary(HASH_BYTES) or not pa.types.is_fixed_size_list(vector_col.type):
                raise ValueError(f"unexpected columns {table.schema}")
            hashes = _hash_array(hash_col).copy()  # copy: the mapping closes here
            return hashes, vector_col.type.list_size

    def _add_to_index(self, parts: list[tuple[int, np.ndarray]]) -> None:
        prefix = [self._prefix, *(_prefixes(h) for _, h in parts)]
        segment = [self._segment, *(np.full(len(h), s, dtype=np.int32) for s, h in parts)]
        row = [self._row, *(np.arange(len(h), dtype=np.int64) for _, h in parts)]
        prefix_all = np.concatenate(prefix)
        order = np.argsort(prefix_all, kind="stable")  # stable: an older segment's copy of a text is found first
        self._prefix = prefix_all[order]
        self._segment = np.concatenate(segment)[order]
        self._row = np.concatenate(row)[order]

    def lookup(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each hash, its (segment, row) or (-1, -1) when the store lacks it (prefix match; verified on read)."""
        prefix = _prefixes(hashes)
        if not len(self._prefix):
            missing = np.full(len(prefix), -1, dtype=np.int64)
            return missing, missing.copy()
        pos = np.minimum(np.searchsorted(self._prefix, prefix), len(self._prefix) - 1)
        hit = self._prefix[pos] == prefix
        segment = np.where(hit, self._segment[pos], -1)
        row = np.where(hit, self._row[pos], -1)
        return segment.astype(np.int64), row.astype(np.int64)

    def read(self, hashes: np.ndarray, segment: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The vectors at (segment, row), and a mask of those whose stored full hash equals the one asked for."""
        vectors: np.ndarray | None = None
        ok = np.zeros(len(hashes), dtype=bool)
        for seg in np.unique(segment[segment >= 0]):
            wanted = np.flatnonzero(segment == seg)
            with pa.memory_map(str(self.segments[seg])) as source:
                table = ipc.open_file(source).read_all()
                stored_hashes = _hash_array(table.column("hash"))[row[wanted]]
                block = _vector_array(table.column("vector"))[row[wanted]]  # fancy indexing copies
            if vectors is None:
                vectors = np.empty((len(hashes), block.shape[1]), dtype=block.dtype)
            vectors[wanted] = block
            ok[wanted] = (stored_hashes == hashes[wanted]).all(axis=1)
        if vectors is None:
            vectors = np.empty((len(hashes), self.dim or 0), dtype=np.float32)
        return vectors, ok

    def add(self, hashes: np.ndarray, vectors: np.ndarray) -> None:
        """Commit one segment (atomically) and index it."""
        vectors = np.ascontiguousarray(vectors)
        if vectors.ndim != 2 or len(vectors) != len(hashes):
            raise ValueError(f"expected {len(hashes)} vectors, got an array of shape {vectors.shape}")
        if self.dim is not None and vectors.shape[1] != self.dim:
            raise ValueError(f"vectors of size {vectors.shape[1]}; the store at {self.folder} holds {self.dim}")
        hash_col = pa.FixedSizeBinaryArray.from_buffers(pa.binary(HASH_BYTES), len(hashes),
                                                        [None, pa.py_buffer(np.ascontiguousarray(hashes).tobytes())])
        values = pa.array(vectors.ravel())
        vector_col = pa.FixedSizeListArray.from_arrays(values, vectors.shape[1])
        table = pa.table({"hash": hash_col, "vector": vector_col})

        def write(f: Any) -> None:
            with ipc.new_file(f, table.schema) as writer:
                writer.write_table(table)

        name = f"{SEGMENT_PREFIX}{uuid.uuid4().hex}{SEGMENT_SUFFIX}"
        _write_atomically(self.folder / name, write)
        self._known.add(name)
        self.dim = vectors.shape[1]
        self.segments.append(self.folder / name)
        self._add_to_index([(len(self.segments) - 1, np.ascontiguousarray(hashes))])

    def get(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectors for the hashes the store holds: ``(found mask, vectors)`` (rows of misses are garbage)."""
        segment, row = self.lookup(hashes)
        vectors, ok = self.read(hashes, segment, row)
        return ok, vectors


def _hash_array(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    data = np.frombuffer(array.buffers()[1], dtype=np.uint8)
    start = array.offset * HASH_BYTES
    return data[start:start + len(array) * HASH_BYTES].reshape(len(array), HASH_BYTES)


def _vector_array(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return array.flatten().to_numpy(zero_copy_only=False).reshape(len(array), array.type.list_size)


class EmbeddingStore:
    """A folder of namespaces, one per ``StoreKey``; safe to share between processes and runs."""

    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser()
        self.root.mkdir(parents=True, exist_ok=True)
        self._namespaces: dict[StoreKey, Namespace] = {}

    def namespace(self, key: StoreKey) -> Namespace:
        if key not in self._namespaces:
            self._namespaces[key] = Namespace(self.root / key.digest(), key)
        return self._namespaces[key]
