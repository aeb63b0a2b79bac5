"""Specs: the machines and the models, as data. Accelerators (peak FLOP/s per dtype, memory bandwidth
and capacity, links) and transformer shapes, each read from ``data/`` and validated once, when loaded.
"""

from .hardware import ACCELERATOR_DIR, GIGA, TERA, Accelerator, get_accelerator, list_accelerators, load_accelerator
from .models import MLA, MODEL_DIR, Model, MoE, expected_experts_touched, get_model, list_models, load_model

__all__ = [
    "Accelerator", "ACCELERATOR_DIR", "expected_experts_touched", "get_accelerator", "get_model", "GIGA",
    "list_accelerators", "list_models", "load_accelerator", "load_model", "MLA", "Model", "MODEL_DIR", "MoE", "TERA"
]
