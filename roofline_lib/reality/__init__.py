"""Reality: published measurements of LLM inference (``records``) beside the course's bound for each.
"""

from .records import (
    ACCEPTED_UNITS,
    MEASUREMENT_DIR,
    MEASURES,
    PER,
    TIME_UNITS,
    Comparison,
    Record,
    achieved_fractions,
    calibrated,
    compare,
    load_measurements,
    measured_vs_predicted,
    published_measurements,
)

__all__ = [
    "ACCEPTED_UNITS", "achieved_fractions", "calibrated", "compare", "Comparison", "load_measurements",
    "measured_vs_predicted", "MEASUREMENT_DIR", "MEASURES", "PER", "published_measurements", "Record", "TIME_UNITS"
]
