"""Static roofline figures (matplotlib).
"""

from .rooflines import (
    DEFAULT_INTENSITY_RANGE,
    crosses,
    format_axes,
    ridge_text,
    roof_curve,
    roofline_plot,
)

__all__ = [
    "crosses", "DEFAULT_INTENSITY_RANGE", "format_axes", "ridge_text", "roof_curve", "roofline_plot"
]
