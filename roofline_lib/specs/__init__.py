"""Specs: the machines and the models, as data. Accelerators (peak FLOP/s per dtype, memory bandwidth
and capacity, links), transformer shapes and multi-GPU systems (topologies), each read from ``data/`` and
validated once, when loaded.
"""

from .hardware import ACCELERATOR_DIR, Accelerator, get_accelerator, list_accelerators, load_accelerator
from .models import MLA, MODEL_DIR, Model, MoE, expected_experts_touched, get_model, list_models, load_model
from .topologies import TOPOLOGY_FILE, Topology, get_topology, list_topologies

__all__ = [
    "Accelerator", "ACCELERATOR_DIR", "expected_experts_touched", "get_accelerator", "get_model", "get_topology",
    "list_accelerators", "list_models", "list_topologies", "load_accelerator", "load_model", "MLA", "Model",
    "MODEL_DIR", "MoE", "Topology", "TOPOLOGY_FILE"
]
