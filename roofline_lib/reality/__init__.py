"""Reality: published measurements of LLM inference (``records``) beside the course's bound for each, the best
estimate of each (``estimate``, term by term) and how good that estimate is (``fit``).
"""

from . import estimate
from .estimate import Terms, estimate_terms
from .records import (
    ACCEPTED_UNITS,
    MEASUREMENT_DIR,
    MEASURES,
    PER,
    POOL_DIR,
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
    "ACCEPTED_UNITS", "achieved_fractions", "calibrated", "compare", "Comparison", "estimate", "estimate_terms",
    "load_measurements", "measured_vs_predicted", "MEASUREMENT_DIR", "MEASURES", "PER", "POOL_DIR",
    "published_measurements",
    "Record", "Terms", "TIME_UNITS",
]
