"""Training: one step of a transformer on one chip, then many chips, and published training runs.

    flops       FLOPs per trained token (6N plus attention) in the conventions sources use; MFU, HFU, time to train
    memory      bytes per chip: weights, gradients, optimizer states (their byte inventory), activations
    one_chip    the step on one chip as workloads on the roofline
    links       the links of the tp, cp, dp and pp groups; NCCL's latency per collective and send
    step        pipeline bubbles; data, ZeRO/FSDP, tensor, sequence, pipeline and context parallel communication;
                train_step (optimistic: datasheet roofs)
    estimate    the best estimate of a step (TrainStep.estimate): achieved ceilings, framework overlap, latency
    peak        the peak memory an allocator reports (TrainStep.memory.peak), term by term
    search      every parallel layout of a number of chips at once, ranked by the estimate, with margins
    practice    around a step: gradient accumulation (the batch's third factor), activation offloading
    records     published training measurements (data/training/) beside the bound and estimates for each
    fit         the estimate's fitted constants and its error by family, fitted on and held out
    moe         mixture-of-experts training with expert parallelism: all-to-alls, expert gradients, DualPipe, FP8
"""

from . import moe
from .estimate import StepEstimate, estimate_step
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
from .peak import PeakMemory, peak_memory
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

__all__ = ["CONVENTIONS", "OPTIMIZERS", "Offload", "PeakMemory", "StepEstimate", "TrainStep", "TrainingMemory",
           "TrainingRecord", "TrainingRun", "TrainingTime", "accumulation_steps", "activation_bytes_per_layer",
           "activation_offload", "bytes_per_param", "compare", "convert_flops", "critical_tokens_per_chip",
           "estimate_step", "flops_per_token", "hfu", "load_measurements", "matmul_params", "measured_vs_predicted",
           "memory", "mfu", "mixed_peak_flops", "moe", "peak_memory", "pipeline_bubble", "published_measurements",
           "search", "step_time_split", "step_workload", "time_to_train", "train_step", "training_runs",
           "update_bytes_per_param"]
