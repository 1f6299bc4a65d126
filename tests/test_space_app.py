"""Each metric Space's app.py starts with the pinned Gradio and serves its page and computation
(speed/check_space_app.py). Gradio is a Space dependency, not complexir's: without it this is skipped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytest.importorskip("gradio", reason="gradio is not installed here (a Space dependency, not complexir's); run "
                                     "`python speed/check_space_app.py --python <python with the pinned gradio>`")


def test_space_apps_start_and_compute():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from check_space_app import main
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    assert main([]) == 0
