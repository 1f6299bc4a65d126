"""Content-addressed embedding store: a text is encoded once per model, whatever task, run or process asks for it.

MTEB's ``CachedEmbeddingWrapper`` keys its vectors by task, so a document held by five tasks is encoded five
times, and its numpy memmap is rewritten in place (a killed run can leave a half-written vector behind). Here a
vector is keyed by what determines it: the model (name, revision), its max sequence length, the prompt it is
encoded with (query or document, and the prompt text the model's wrapper resolves for the task) and the SHA-256
of the text exactly as the model reads it.

Layout on disk::

    <root>/<key digest>/key.json             the key's fields, for people and for checks
    <root>/<key digest>/seg-<id>.arrow        Arrow IPC files, columns ``hash`` (32 bytes) and ``vector``
    <root>/<key digest>/index.json            the current on-disk index: its file and the segments it covers
    <root>/<key digest>/index-<gen>.bin       sorted 8-byte hash prefixes and their (segment, row) (``DiskIndex``)

Segments are append-only and written whole: to a temporary file in the same folder, fsync'ed, then renamed into
place (``os.replace`` is atomic on POSIX) and the folder fsync'ed. Readers only ever open ``seg-*.arrow``, so a
run killed midway leaves at worst a ``.tmp-*`` file nobody reads; a segment that still fails to open (a damaged
disk) is skipped with a warning and its texts are encoded again. Every served vector is checked against its full
hash.

The index is bounded per process: segments are first indexed in memory (about 20 bytes per vector), and every
``MERGE_EVERY`` vectors (4M: about 80 MB) one process at a time (a lock file) merges them, chunk by chunk, into a
new generation of the on-disk index, written the same atomic way and then named by ``index.json`` (itself replaced
atomically). Lookups read only the 4 KiB blocks of that file their prefixes fall in, with ``os.pread``, through
an in-memory array of every 512th prefix, so a store of 113.5M vectors costs a process about 2 MB of fences plus
at most 80 MB of not-yet-merged entries, not 1.8 GB. The segments stay the truth: a merge killed midway leaves
the previous generation named, a segment committed after the last merge is indexed in memory by whoever reads
the store next, and other processes (Ray workers, a later run) see new segments and generations on ``refresh``.
"""

from __future__ import annotations

import fcntl
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
INDEX_MANIFEST = "index.json"  # the current on-disk index generation (replaced atomically)
INDEX_PREFIX = "index-"
INDEX_LOCK = "index.lock"  # held while merging, so one process merges at a time
FENCE_EVERY = 512  # entries per block of the on-disk index: one 4 KiB page of prefixes
MERGE_EVERY = 4 << 20  # vectors indexed in memory (about 20 bytes each) before they are merged to disk
MERGE_CHUNK = 1 << 20  # entries of the on-disk index read at a time while merging


def text_hashes(texts: list[str]) -> np.ndarray:
    """SHA-256 of each text (UTF-8), as an ``(n, 32)`` uint8 array."""
    out = np.empty((len(texts), HASH_BYTES), dtype=np.uint8)
    for i, text in enumerate(texts):
        out[i] = np.frombuffer(hashlib.sha256(text.encode("utf-8")).digest(), dtype=np.uint8)
    return out


def _hash_prefixes(hashes: np.ndarray) -> np.ndarray:
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


class DiskIndex:
    """One generation of a namespace's on-disk index, read with ``os.pread``: nothing of it stays in memory but
    every ``FENCE_EVERY``-th prefix (8 bytes per 512 vectors).

    The file ``index-<generation>.bin`` holds ``count`` sorted 8-byte hash prefixes, then their locations
    (``segment number << 32 | row``, the segment numbered in the manifest's list), then the fences; all
    little-endian uint64. Lookups read only the blocks of 512 entries their prefixes fall in (one 4 KiB page of
    prefixes and one of locations each), so memory stays bounded whatever the store's size. The file descriptor
    stays open, so a generation replaced (and unlinked) by another process's merge can still be read.
    """

    def __init__(self, folder: Path, manifest: dict[str, Any]):
        self.generation: str = manifest["generation"]
        self.count: int = manifest["count"]
        self.dim: int = manifest["dim"]
        self.segments: list[str] = list(manifest["segments"])
        self.path = folder / manifest["file"]
        self._fd = os.open(self.path, os.O_RDONLY)
        n_fences = -(-self.count // FENCE_EVERY)
        self.fences = self._read(2 * self.count, n_fences)

    def _read(self, start: int, n: int) -> np.ndarray:
        """``n`` uint64 values from entry ``start`` of the file."""
        data = os.pread(self._fd, 8 * n, 8 * start)
        if len(data) != 8 * n:
            raise OSError(f"{self.path}: truncated (wanted {n} values at {start})")
        return np.frombuffer(data, dtype="<u8")

    def close(self) -> None:
        os.close(self._fd)

    def lookup(self, prefix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each prefix: whether the index holds it, and its location (garbage where not)."""
        block = np.searchsorted(self.fences, prefix, side="right") - 1  # -1: below the smallest prefix
        ask = np.flatnonzero(block >= 0)
        hit = np.zeros(len(prefix), dtype=bool)
        location = np.zeros(len(prefix), dtype="<u8")
        if not len(ask):
            return hit, location
        needed = np.unique(block[ask])
        # consecutive blocks are read in one go; the blocks read, in order, form one sorted array
        runs = np.split(needed, np.flatnonzero(np.diff(needed) != 1) + 1)
        prefixes, locations = [], []
        for run in runs:
            lo, hi = int(run[0]) * FENCE_EVERY, min((int(run[-1]) + 1) * FENCE_EVERY, self.count)
            prefixes.append(self._read(lo, hi - lo))
            locations.append(self._read(self.count + lo, hi - lo))
        read_prefix, read_location = np.concatenate(prefixes), np.concatenate(locations)
        pos = np.minimum(np.searchsorted(read_prefix, prefix[ask]), len(read_prefix) - 1)
        hit[ask] = read_prefix[pos] == prefix[ask]
        location[ask] = read_location[pos]
        return hit, location


class Namespace:
    """The vectors of one ``StoreKey``: append-only segments, an on-disk index of those merged so far, and an
    in-memory index of the others (at most about ``merge_every`` vectors)."""

    def __init__(self, folder: Path, key: StoreKey, merge_every: int | None = None):
        self.folder = folder
        self.key = key
        self.merge_every = merge_every or MERGE_EVERY
        folder.mkdir(parents=True, exist_ok=True)
        key_file = folder / KEY_FILE
        if not key_file.exists():
            payload = json.dumps(asdict(key), indent=1, sort_keys=True).encode()
            _write_atomically(key_file, lambda f: f.write(payload))
        # the on-disk index's segments first (numbered as in its manifest), then those indexed in memory
        self.segments: list[Path] = []
        self.disk: DiskIndex | None = None
        self._known: set[str] = set()
        self._prefix = np.empty(0, dtype="<u8")  # sorted: the in-memory index of segments[len(disk.segments):]
        self._segment = np.empty(0, dtype=np.int32)
        self._row = np.empty(0, dtype=np.int64)
        self.dim: int | None = None
        self.refresh()

    def __len__(self) -> int:
        return (self.disk.count if self.disk else 0) + len(self._prefix)

    @property
    def in_memory(self) -> int:
        """Vectors indexed in this process's memory (not yet in the on-disk index)."""
        return len(self._prefix)

    def refresh(self) -> int:
        """Index the segments written since the last look (by this or any other process), merging them into the
        on-disk index every ``merge_every`` vectors; returns how many segments were new."""
        self._adopt_manifest()
        new = sorted(p for p in self.folder.glob(f"{SEGMENT_PREFIX}*{SEGMENT_SUFFIX}") if p.name not in self._known)
        parts: list[tuple[int, np.ndarray]] = []
        added = 0
        for path in new:
            if path.name in self._known:  # merged into the index another process wrote meanwhile
                continue
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
            added += 1
            if len(self._prefix) + sum(len(h) for _, h in parts) >= self.merge_every:  # bounded while reading too
                self._add_to_index(parts)
                parts = []
                self._merge()
        if parts:
            self._add_to_index(parts)
        if len(self._prefix) >= self.merge_every:
            self._merge()
        return added

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
        """Insert new segments' entries into the sorted in-memory index (one pass over it, no re-sort)."""
        prefix = np.concatenate([_hash_prefixes(h) for _, h in parts])
        order = np.argsort(prefix, kind="stable")  # stable: an older segment's copy of a text is found first
        prefix = prefix[order]
        segment = np.concatenate([np.full(len(h), s, dtype=np.int32) for s, h in parts])[order]
        row = np.concatenate([np.arange(len(h), dtype=np.int64) for _, h in parts])[order]
        at = np.searchsorted(self._prefix, prefix, side="right")  # after the copies already indexed
        self._prefix = np.insert(self._prefix, at, prefix)
        self._segment = np.insert(self._segment, at, segment)
        self._row = np.insert(self._row, at, row)

    # -- the on-disk index ----------------------------------------------------------------------------------
    def _read_manifest(self) -> dict[str, Any] | None:
        try:
            return json.loads((self.folder / INDEX_MANIFEST).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:  # written atomically, so only a damaged disk gets here
            logger.warning("embedding store: ignoring unreadable %s (%s)", self.folder / INDEX_MANIFEST, err)
            return None

    def _adopt_manifest(self) -> None:
        """Switch to the newest on-disk index generation: the segments it covers leave the in-memory index."""
        for _ in range(3):  # a merge may replace the generation between reading the manifest and opening it
            manifest = self._read_manifest()
            if manifest is None or (self.disk is not None and manifest["generation"] == self.disk.generation):
                return
            try:
                disk = DiskIndex(self.folder, manifest)
            except FileNotFoundError:
                continue
            except OSError as err:
                logger.warning("embedding store: ignoring unreadable index %s (%s)", manifest.get("file"), err)
                return
            break
        else:
            return
        if self.dim is not None and disk.dim != self.dim:
            logger.warning("embedding store: ignoring index %s: vectors of size %d, this process holds %d",
                           disk.path, disk.dim, self.dim)
            disk.close()
            return
        covered = set(disk.segments)
        old_disk = len(self.disk.segments) if self.disk else 0
        pending = self.segments[old_disk:]
        keep = [p for p in pending if p.name not in covered]
        renumber = np.full(len(pending) + 1, -1, dtype=np.int32)  # old in-memory segment number - old_disk → new
        kept = {p.name: len(disk.segments) + i for i, p in enumerate(keep)}
        for i, p in enumerate(pending):
            renumber[i] = kept.get(p.name, -1)
        new_segment = renumber[self._segment - old_disk] if len(self._segment) else self._segment
        stay = new_segment >= 0
        self._prefix, self._segment, self._row = self._prefix[stay], new_segment[stay], self._row[stay]
        if self.disk is not None:
            self.disk.close()
        self.disk = disk
        self.segments = [self.folder / name for name in disk.segments] + keep
        self._known.update(covered)
        self.dim = disk.dim

    def _merge(self) -> None:
        """Merge the in-memory index into a new on-disk generation, chunk by chunk (memory: ``MERGE_CHUNK``
        entries plus the in-memory index). One process merges at a time (a lock file); a process that finds the
        lock taken keeps its in-memory index and adopts the other's generation on its next refresh."""
        with open(self.folder / INDEX_LOCK, "a+b") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            try:
                self._adopt_manifest()  # what another process merged is not merged again
                if len(self._prefix):
                    self._write_generation()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _write_generation(self) -> None:
        old = self.disk
        old_count = old.count if old else 0
        count = old_count + len(self._prefix)
        n_fences = -(-count // FENCE_EVERY)
        new_location = (self._segment.astype("<u8") << np.uint64(32)) | self._row.astype("<u8")
        generation = uuid.uuid4().hex
        name = f"{INDEX_PREFIX}{generation}.bin"
        fences: list[np.ndarray] = []

        def write(f: Any) -> None:
            fd = f.fileno()
            os.ftruncate(fd, 8 * (2 * count + n_fences))
            written, taken = 0, 0  # entries written; in-memory entries merged so far
            starts = range(0, old_count, MERGE_CHUNK) if old_count else [0]
            for start in starts:
                if old is not None and old_count:
                    n = min(MERGE_CHUNK, old_count - start)
                    chunk_prefix, chunk_location = old._read(start, n), old._read(old_count + start, n)
                    last = start + n == old_count
                else:
                    chunk_prefix, chunk_location, last = np.empty(0, "<u8"), np.empty(0, "<u8"), True
                upto = len(self._prefix) if last else int(np.searchsorted(self._prefix, chunk_prefix[-1], "right"))
                prefix = np.concatenate([chunk_prefix, self._prefix[taken:upto]])
                location = np.concatenate([chunk_location, new_location[taken:upto]])
                order = np.argsort(prefix, kind="stable")  # stable: the older generation's copy first
                prefix, location = prefix[order], location[order]
                os.pwrite(fd, prefix.tobytes(), 8 * written)
                os.pwrite(fd, location.tobytes(), 8 * (count + written))
                fences.append(prefix[(-written) % FENCE_EVERY::FENCE_EVERY])
                written += len(prefix)
                taken = upto
            os.pwrite(fd, np.concatenate(fences).astype("<u8").tobytes(), 8 * 2 * count)

        _write_atomically(self.folder / name, write)
        manifest = {"generation": generation, "file": name, "count": count, "dim": self.dim,
                    "segments": [p.name for p in self.segments]}
        payload = json.dumps(manifest).encode()
        _write_atomically(self.folder / INDEX_MANIFEST, lambda f: f.write(payload))
        self._adopt_manifest()
        # earlier generations (and any a killed merge left): processes holding one open keep reading it, and one
        # about to open it reads the manifest again
        for stale in self.folder.glob(f"{INDEX_PREFIX}*.bin"):
            if stale.name != name:
                stale.unlink(missing_ok=True)

    # -- reading and writing vectors ------------------------------------------------------------------------
    def lookup(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each hash, its (segment, row) or (-1, -1) when the store lacks it (prefix match; verified on read)."""
        prefix = _hash_prefixes(hashes)
        segment = np.full(len(prefix), -1, dtype=np.int64)
        row = np.full(len(prefix), -1, dtype=np.int64)
        if len(self._prefix):
            pos = np.minimum(np.searchsorted(self._prefix, prefix), len(self._prefix) - 1)
            hit = self._prefix[pos] == prefix
            segment[hit], row[hit] = self._segment[pos[hit]], self._row[pos[hit]]
        if self.disk is not None and self.disk.count:
            ask = np.flatnonzero(segment < 0)
            hit, location = self.disk.lookup(prefix[ask])
            segment[ask[hit]] = (location[hit] >> np.uint64(32)).astype(np.int64)
            row[ask[hit]] = (location[hit] & np.uint64(0xFFFFFFFF)).astype(np.int64)
        return segment, row

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
        if len(self._prefix) >= self.merge_every:
            self._merge()

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
    """A folder of namespaces, one per ``StoreKey``; safe to share between processes and runs. ``merge_every``:
    vectors a namespace indexes in memory before merging them into its on-disk index (default ``MERGE_EVERY``)."""

    def __init__(self, root: str | Path, merge_every: int | None = None):
        self.root = Path(root).expanduser()
        self.root.mkdir(parents=True, exist_ok=True)
        self.merge_every = merge_every
        self._namespaces: dict[StoreKey, Namespace] = {}

    def namespace(self, key: StoreKey) -> Namespace:
        if key not in self._namespaces:
            self._namespaces[key] = Namespace(self.root / key.digest(), key, self.merge_every)
        return self._namespaces[key]
