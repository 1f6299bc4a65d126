import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("strecall")
launch_gradio_widget(module)
