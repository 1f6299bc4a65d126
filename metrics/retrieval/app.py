import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("retrieval")
launch_gradio_widget(module)
