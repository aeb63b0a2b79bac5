"""Core: what every other room builds on. Units and engineering notation, the one module of input
checks, number formats, and the TOML catalogs the data files are read through.
"""

from .catalog import DATA_DIR
from .checks import dtypes, figure, fraction, non_negative, positive
from .dtypes import BYTES_PER_ELEMENT, Dtypes, bytes_per_element, canonical_dtype
from .units import (
    GIB,
    PREFIXES,
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    byte_rate,
    eng,
    flop_rate,
    gib,
    in_units,
    nbytes,
    scale,
    seconds,
)

__all__ = [
    "byte_rate", "BYTES_PER_ELEMENT", "bytes_per_element", "canonical_dtype", "DATA_DIR", "Dtypes", "dtypes", "eng",
    "figure", "flop_rate", "fraction", "GIB", "gib", "in_units", "nbytes", "non_negative", "positive", "PREFIXES",
    "scale", "seconds", "SECONDS_PER_DAY", "SECONDS_PER_HOUR"
]
