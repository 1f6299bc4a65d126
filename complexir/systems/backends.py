"""sentence-transformers' inference backends (``--backend``) and the one piece of advice about the ones this install
cannot load, shared by the help and the error (docs/commands/run.md, "CPU backends", says why)."""

from __future__ import annotations

#: sentence-transformers' inference backends; "torch" is the model as published, the others are exports of it
BACKENDS = ("torch", "onnx", "openvino")


def backend_advice(backend: str) -> str:
    """What to do about ``backend`` when it does not load: not ``pip install sentence-transformers[<backend>]``,
    which resolves to an optimum that pulls older transformers and huggingface_hub and so breaks this install."""
    return (f"no optimum release fits the transformers and huggingface_hub complexir is tested with, and `pip install "
            f"sentence-transformers[{backend}]` would downgrade them and break this install (docs/commands/run.md, "
            "'CPU backends'); use --backend torch")
