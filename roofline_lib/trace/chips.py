"""The course's accelerator for the device a trace recorded (``deviceProperties``' name)."""

import re

from ..specs.hardware import get_accelerator

CHIP_NAMES = (  # what deviceProperties calls a chip -> the course's name for it
    ("H100 80GB HBM3", "H100 SXM5"), ("H100 PCIe", "H100 PCIe"), ("H100 NVL", "H100 NVL"),
    ("H200", "H200 SXM"), ("GB200", "GB200"), ("B200", "B200"), ("MI300X", "MI300X"), ("MI325X", "MI325X"),
    ("A100-SXM4-80GB", "A100 80GB SXM4"), ("A100-SXM4-40GB", "A100 40GB SXM4"), ("A100 80GB PCIe", "A100 80GB PCIe"),
    ("L40S", "L40S"), ("L4", "L4"), ("A10", "A10"), ("T4", "T4"),
)


def chip_for(device_name):
    """The course's accelerator for a recorded device name, or None where the course has no such chip."""
    if not device_name:
        return None
    try:
        return get_accelerator(device_name)  # a course name, as the course's own traces record it
    except ValueError:
        pass
    for mark, chip in CHIP_NAMES:  # whole words: "A10" is not "A100-PG509-200"
        if re.search(rf"(?<![\w-]){re.escape(mark)}(?![\w-])", device_name, re.IGNORECASE):
            return get_accelerator(chip)
    return None


__all__ = ["CHIP_NAMES", "chip_for"]
