"""Interactive explorers: figures built once and updated in place when a slider moves.

Each explorer is a class whose ``update(**values)`` is a plain function (it
moves the artists and returns the numbers it shows), so it is tested without a
browser; ``.widget()`` wires it to ipywidgets for JupyterLab (with
``%matplotlib widget`` the figure itself is an ipympl widget). ``live_figures()`` chooses that backend where it
works and inline redraws where it does not (Colab, ipywidgets 7).
"""

from .attention_explorer import AttentionExplorer
from .base import Explorer, eng, freeze_layout, live_figures, snapshot
from .comms_explorer import CommsExplorer
from .controls import log_slider
from .llm_explorer import LLMExplorer
from .matmul_explorer import MatmulExplorer
from .moe_explorer import MoEExplorer
from .roofline_explorer import RoofAxes, RooflineExplorer
from .serving_explorer import ServingExplorer
from .training_explorer import TrainingExplorer

__all__ = ["AttentionExplorer", "CommsExplorer", "Explorer", "LLMExplorer", "MatmulExplorer", "MoEExplorer", "RoofAxes",
           "RooflineExplorer", "ServingExplorer", "TrainingExplorer", "eng", "freeze_layout",
           "live_figures", "log_slider", "snapshot"]
