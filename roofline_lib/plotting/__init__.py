"""Static roofline figures (matplotlib).
"""

from .rooflines import (
    BESIDE,
    DEFAULT_INTENSITY_RANGE,
    RIDGE_SIDES,
    crosses,
    format_axes,
    marker_boxes,
    place_beside,
    ridge_text,
    roof_curve,
    roofline_plot,
)

__all__ = [
    "BESIDE", "crosses", "DEFAULT_INTENSITY_RANGE", "format_axes", "marker_boxes", "place_beside", "RIDGE_SIDES",
    "ridge_text", "roof_curve", "roofline_plot"
]
