"""Start each metric Space's app.py, as the Hub would, and fetch its page and one computation.

    python speed/check_space_app.py [--python PYTHON] [METRIC ...]

The Space is staged exactly as `complexir push` uploads it, then ``PYTHON app.py`` runs in it with Gradio bound to
127.0.0.1 on a free port. PYTHON (default: this interpreter) must have the versions the Space pins: Gradio at the
README's ``sdk_version`` and requirements.txt, e.g.

    python -m venv /tmp/space && /tmp/space/bin/pip install gradio==<sdk_version> -r metrics/alpha_ndcg/requirements.txt

(minus the ``complexir`` line, which staging drops). It fails, naming the metric, when the installed Gradio is not
the pinned one, when the app does not serve its page within the time limit, or when the page's computation
differs from the in-repo module's.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
METRICS = ("alpha_ndcg", "strecall", "retrieval")
EXAMPLES = {  # one computation per metric, sent through the page's API
    "alpha_ndcg": ([["d1", "d3", "d2"]], [[{"doc_id": "d1", "nugget_id": "1", "label": 1},
                                           {"doc_id": "d2", "nugget_id": "2", "label": 1}]], {"k": [1, 3]}),
    "strecall": ([["d1", "d3", "d2"]], [[{"doc_id": "d1", "nugget_id": "1", "label": 1},
                                         {"doc_id": "d2", "nugget_id": "2", "label": 1}]], {"k": [1, 3]}),
    "retrieval": ([["b", "a"]], [[{"doc_id": "a", "label": 1}, {"doc_id": "c", "label": 0}]], {"k": [1, 2]}),
}
# Run by PYTHON: the installed Gradio version, and the computation through the running app's API.
_VERSION = "import gradio; print(gradio.__version__)"
_CALL = """
import json, sys
from gradio_client import Client
url, predictions, references, options = sys.argv[1:]
print(json.dumps(Client(url, verbose=False).predict(predictions, references, options, api_name="/compute")))
"""


def pinned_sdk_version(folder: Path) -> str:
    from complexir.layout.card import read_front_matter

    return str(read_front_matter(folder / "README.md")["sdk_version"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check(metric: str, python: str, timeout: float) -> str:
    """Stage, start and query one metric's Space; returns a one-line summary, raises on failure."""
    import evaluate

    from complexir.hub.push import stage_space

    local = evaluate.load(str(REPO / "metrics" / metric))
    pinned = pinned_sdk_version(REPO / "metrics" / metric)
    installed = subprocess.run([python, "-c", _VERSION], capture_output=True, text=True, check=True).stdout.strip()
    if installed != pinned:
        raise SystemExit(f"{metric}: README pins gradio {pinned}, {python} has {installed}")
    with tempfile.TemporaryDirectory(prefix=f"space-{metric}-") as tmp:
        space = stage_space(REPO / "metrics" / metric, Path(tmp) / metric, f"complexir/{metric}")
        port = _free_port()
        env = {**os.environ, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port),
               "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
        env.pop("PYTHONPATH", None)
        log = Path(tmp) / "app.log"
        with open(log, "w") as out:
            app = subprocess.Popen([python, "app.py"], cwd=space, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/"
        try:
            started = time.monotonic()
            while True:
                if app.poll() is not None:
                    raise SystemExit(f"{metric}: app.py exited with {app.returncode}:\n{log.read_text()[-3000:]}")
                try:
                    with urllib.request.urlopen(url, timeout=5) as response:
                        page = response.read().decode("utf-8", "replace")
                    break
                except OSError:
                    if time.monotonic() - started > timeout:
                        raise SystemExit(f"{metric}: no page at {url} after {timeout:.0f} s:\n"
                                         f"{log.read_text()[-3000:]}") from None
                    time.sleep(1)
            served = time.monotonic() - started
            if f"Metric: {local.name}" not in page:
                raise SystemExit(f"{metric}: the page at {url} does not carry the title 'Metric: {local.name}'")
            predictions, references, options = EXAMPLES[metric]
            called = subprocess.run([python, "-c", _CALL, url, json.dumps(predictions), json.dumps(references),
                                     json.dumps(options)], capture_output=True, text=True, timeout=timeout)
            if called.returncode != 0:
                raise SystemExit(f"{metric}: the page's API failed:\n{called.stderr[-3000:]}")
            got = json.loads(called.stdout.strip().splitlines()[-1])
        finally:
            app.terminate()
            app.wait(timeout=30)
    expected = local.compute(predictions=predictions, references=references, **options)
    if got.keys() != expected.keys() or any(abs(got[k] - expected[k]) > 1e-12 for k in got):
        raise SystemExit(f"{metric}: the Space computed {got}, the in-repo module {expected}")
    return f"{metric}: gradio {installed} served {url} after {served:.1f} s; computed {got}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metrics", nargs="*", metavar="METRIC", help=f"default: all of {', '.join(METRICS)}")
    parser.add_argument("--python", default=sys.executable, help="interpreter with the Space's pinned packages")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the page")
    args = parser.parse_args(argv)
    if unknown := [m for m in args.metrics if m not in METRICS]:
        parser.error(f"unknown metric(s) {unknown}; choose from {', '.join(METRICS)}")
    for metric in args.metrics or METRICS:
        print(check(metric, args.python, args.timeout), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
