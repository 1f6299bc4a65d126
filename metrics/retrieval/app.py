"""Space launcher: the widget for the metric script next to this file (also when run from elsewhere)."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).resolve().with_name("retrieval.py")))
launch_gradio_widget(module)
