"""Checks of input that raise ValueError with a message a reader can act on.

The one place the library decides what a valid size or figure is:

- ``positive(name, value)``: what a learner passes (a size, a count, a time): a number or an array of
  them, finite and > 0. Python numbers take a fast path, so a scalar call costs well under a microsecond.
- ``non_negative(name, value)``: the same, >= 0 (a cached length, reserved bytes, a latency).
- ``fraction(name, value)``: a share or a probability, in [0, 1] (``zero_ok=False``: in (0, 1]).
- ``dtypes(weight_dtype, kv_dtype, compute_dtype)``: the three number formats of an LLM step, as one
  ``Dtypes`` bundle of canonical names.
- ``figure(name, value)`` and ``figure_problem(value)``: one number read from a data file or given to
  a constructor (a chip's bandwidth, a model's layer count): a real number, not a bool or a string.

Public functions check their input once, where it comes in, and call internal functions (named
``*_unchecked`` where another module calls them) that trust it. ``tests/test_checks_once.py`` counts
the checks one public call runs.
"""

import math
import numbers

import numpy as np

from .dtypes import Dtypes, canonical_dtype

_FAST_FLOAT = (float, np.float64, np.float32)
_FAST_INT = (int, np.int64, np.int32)


def positive(name, value, *, integer=False):
    """Return ``value`` (a number or a numpy array) after checking it is finite and > 0.

    Scalars come back as Python numbers, sequences as float arrays, so the
    numeric code can be vectorised over slider sweeps.
    """
    kind = type(value)
    if kind in _FAST_INT:  # the common case, a plain number: decided without numpy
        if value > 0:
            return int(value)
    elif kind in _FAST_FLOAT:
        if 0 < value < math.inf and (not integer or float(value).is_integer()):
            return float(value)
    return _positive_slow(name, value, integer)


def non_negative(name, value, *, integer=False):
    """Return ``value`` (a number or a numpy array) after checking it is finite and >= 0."""
    kind = type(value)
    if kind in _FAST_INT:
        if value >= 0:
            return int(value)
    elif kind in _FAST_FLOAT:
        if 0 <= value < math.inf and (not integer or float(value).is_integer()):
            return float(value)
    return _positive_slow(name, value, integer, zero_ok=True)


def fraction(name, value, *, zero_ok=True):
    """Return ``value`` (a number or an array) after checking it lies in [0, 1] ((0, 1] without ``zero_ok``)."""
    checked = non_negative(name, value) if zero_ok else positive(name, value)
    if np.any(np.asarray(checked) > 1):
        first = np.asarray(checked).flat[int(np.argmax(np.asarray(checked).ravel() > 1))].item()
        raise ValueError(f"{name} must be a share in {'[0' if zero_ok else '(0'}, 1], got {first!r}")
    return checked


def dtypes(weight_dtype="bf16", kv_dtype="bf16", compute_dtype="bf16"):
    """The three number formats of an LLM step checked at once: a ``Dtypes`` of canonical names."""
    return Dtypes(canonical_dtype(weight_dtype), canonical_dtype(kv_dtype), canonical_dtype(compute_dtype))


def _positive_slow(name, value, integer, zero_ok=False):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise ValueError(f"{name} must be a {'non-negative' if zero_ok else 'positive'} number, got {value!r}")
    if isinstance(value, numbers.Number):
        arr = np.asarray(value)
    else:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a {'non-negative' if zero_ok else 'positive'} number or an array of them, "
                f"got {value!r}"
            ) from None
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be a real positive number, got {value!r}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    bad = ~np.isfinite(arr) | ((arr < 0) if zero_ok else (arr <= 0))
    if np.any(bad):
        first = arr.flat[int(np.argmax(bad.ravel()))].item()  # a Python number: no np.int64(...) in the message
        raise ValueError(f"{name} must be finite and {'>=' if zero_ok else '>'} 0, got {first!r}")
    if integer and np.any(arr != np.round(arr)):
        first = arr.flat[int(np.argmax((arr != np.round(arr)).ravel()))].item()
        raise ValueError(f"{name} must be a whole number, got {first!r}")
    if arr.ndim == 0:
        return arr.item()
    return arr.astype(float)


def figure_problem(value, *, integer=False, zero_ok=False):
    """What is wrong with one number from a data file or a constructor ("must be ..."), or None if nothing.

    A figure is an int or a float (a bool or a string is not), finite, and > 0 (>= 0 with ``zero_ok``);
    with ``integer`` it must be an int.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a {'whole ' if integer else ''}number, got {value!r}"
    if integer and not isinstance(value, int):
        return f"must be a whole number, got {value!r}"
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        return f"must be finite and {'>=' if zero_ok else '>'} 0, got {value!r}"
    return None


def figure(name, value, *, integer=False, zero_ok=False):
    """``value`` checked by ``figure_problem`` (as a float; an int with ``integer``), else ValueError
    "<name> must be ..."."""
    problem = figure_problem(value, integer=integer, zero_ok=zero_ok)
    if problem:
        raise ValueError(f"{name} {problem}")
    return value if integer else float(value)


__all__ = ["dtypes", "figure", "figure_problem", "fraction", "non_negative", "positive"]
