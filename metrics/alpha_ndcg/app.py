"""Space launcher: a Gradio page computing the metric script next to this file (also when run from elsewhere).

Written here rather than with evaluate's `launch_gradio_widget`: that helper builds its page with
`gr.inputs` / `gr.outputs`, which Gradio 4 removed, and Gradio 3 no longer starts with today's Starlette.
The versions this runs with are pinned in README.md (`sdk_version`) and requirements.txt;
`python speed/check_space_app.py` starts it against them and fetches its page.
"""

import json
from pathlib import Path

import evaluate
import gradio as gr

module = evaluate.load(str(Path(__file__).resolve().with_name("alpha_ndcg.py")))


def compute(predictions: str, references: str, options: str) -> dict:
    """The metric on JSON input: ``predictions`` and ``references`` as ``compute`` takes them, ``options`` its
    keyword arguments (e.g. ``{"k": [5, 20]}``)."""
    return module.compute(predictions=json.loads(predictions), references=json.loads(references),
                          **json.loads(options or "{}"))


demo = gr.Interface(
    fn=compute,
    inputs=[gr.Textbox(label="predictions (JSON: one ranked list of document ids per query)", lines=3),
            gr.Textbox(label="references (JSON: one list of judgments per query)", lines=6),
            gr.Textbox(label="keyword arguments (JSON)", value="{}")],
    outputs=gr.JSON(label=module.name),
    title=f"Metric: {module.name}",
    description=module.info.description,
)

if __name__ == "__main__":
    demo.launch()
