"""How a system is run, besides what it is: the engines, long-document modes and inference backends as types, and
:class:`SearchOptions`, what ``complexir.systems.kinds.build_search_model`` takes. Cheap to import (no mteb, no
torch): the command line builds its parsers from these names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

#: the search engines (``complexir.cli.engine_options`` describes them)
Engine = Literal["local", "ray", "mteb"]
ENGINES: tuple[Engine, ...] = get_args(Engine)
#: the long-document modes (``complexir.systems.long_docs``)
LongDocs = Literal["none", "chunk"]
LONG_DOCS: tuple[LongDocs, ...] = get_args(LongDocs)
#: sentence-transformers' inference backends; "torch" is the model as published, the others are exports of it
Backend = Literal["torch", "onnx", "openvino"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)


def backend_advice(backend: str) -> str:
    """What to do about ``backend`` when it does not load, for the help and the error alike: not ``pip install
    sentence-transformers[<backend>]``, which resolves to an optimum that pulls older transformers and huggingface_hub
    and so breaks this install (docs/commands/run.md, "CPU backends", says why)."""
    return (f"no optimum release fits the transformers and huggingface_hub complexir is tested with, and `pip install "
            f"sentence-transformers[{backend}]` would downgrade them and break this install (docs/commands/run.md, "
            "'CPU backends'); use --backend torch")


@dataclass(frozen=True)
class SearchOptions:
    """The engine and embedding store (``complexir.cli.engine_options``), the dense encoder's backend, length and
    long-document mode, and the name results are filed under."""

    engine: Engine = "local"
    cache: str | None = None  # the embedding store's folder (None: a temporary store for this run)
    address: str | None = None  # engine ray: the cluster to join
    workers: int | None = None  # engine ray: encoder actors
    gpus_per_worker: float = 0.0  # engine ray
    batch_docs: int | None = None  # engines local and ray: documents per corpus batch
    long_docs: LongDocs = "none"
    backend: Backend = "torch"
    max_seq_length: int | None = None
    model_name: str | None = None  # file results under this name
