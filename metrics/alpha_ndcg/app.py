import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("alpha_ndcg")
launch_gradio_widget(module)
