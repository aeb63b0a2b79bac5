"""Training: one step of a transformer on one chip, then many chips, and published training runs.

    flops       FLOPs per trained token (6N plus attention) in the conventions sources use; MFU, HFU, time to train
    memory      bytes per chip: weights, gradients, optimizer states (their byte inventory), activations
    step        the step as workloads on the roofline; pipeline bubbles; data, ZeRO/FSDP, tensor, sequence,
                pipeline and context parallel communication; train_step
    search      every parallel layout of a number of chips at once, the fastest that fit
    practice    around a step: gradient accumulation (the batch's third factor), activation offloading
    records     published training measurements (data/training/) beside the bound for each
    moe         mixture-of-experts training with expert parallelism: all-to-alls, expert gradients, DualPipe, FP8
"""

from . import moe
from .flops import (
                     CONVENTIONS,
                     TrainingTime,
                     convert_flops,
                     flops_per_token,
                     hfu,
                     matmul_params,
                     mfu,
                     mixed_peak_flops,
                     time_to_train,
)
from .memory import (
                     OPTIMIZERS,
                     TrainingMemory,
                     activation_bytes_per_layer,
                     bytes_per_param,
                     memory,
                     update_bytes_per_param,
)
from .practice import Offload, accumulation_steps, activation_offload
from .records import (
                     TrainingRecord,
                     TrainingRun,
                     compare,
                     load_measurements,
                     measured_vs_predicted,
                     published_measurements,
                     training_runs,
)
from .search import search
from .step import (
                     TrainStep,
                     critical_tokens_per_chip,
                     pipeline_bubble,
                     step_time_split,
                     step_workload,
                     train_step,
)

__all__ = ["CONVENTIONS", "OPTIMIZERS", "Offload", "TrainStep", "TrainingMemory", "TrainingRecord", "TrainingRun",
           "TrainingTime", "accumulation_steps", "activation_bytes_per_layer", "activation_offload",
           "bytes_per_param", "compare", "convert_flops", "critical_tokens_per_chip", "flops_per_token", "hfu",
           "load_measurements", "matmul_params", "measured_vs_predicted", "memory", "mfu", "mixed_peak_flops", "moe",
           "pipeline_bubble", "published_measurements", "search", "step_time_split", "step_workload",
           "time_to_train", "train_step", "training_runs", "update_bytes_per_param"]
