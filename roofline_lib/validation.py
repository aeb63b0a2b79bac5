"""Checks of user input that raise ValueError with a message a reader can act on."""

import numbers

import numpy as np


def positive(name, value, *, integer=False):
    """Return ``value`` (a number or a numpy array) after checking it is finite and > 0.

    Scalars come back as Python numbers, sequences as float arrays, so the
    numeric code can be vectorised over slider sweeps.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if isinstance(value, numbers.Number):
        arr = np.asarray(value)
    else:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a positive number or an array of them, got {value!r}"
            ) from None
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be a real positive number, got {value!r}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if np.any(bad):
        first = arr.flat[int(np.argmax(bad.ravel()))]
        raise ValueError(f"{name} must be finite and > 0, got {first!r}")
    if integer and np.any(arr != np.round(arr)):
        first = arr.flat[int(np.argmax((arr != np.round(arr)).ravel()))]
        raise ValueError(f"{name} must be a whole number, got {first!r}")
    if arr.ndim == 0:
        return arr.item()
    return arr.astype(float)
