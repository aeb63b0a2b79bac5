"""Numbers for people: engineering notation with SI prefixes, for times, bytes and rates.

Inside the library every quantity is in SI base units (second, byte, FLOP, FLOP/s, byte/s); these
functions only turn a number into text, or read a number in a prefixed unit, when printing:

    >>> import roofline_lib as rl
    >>> rl.eng(2.5e12, "FLOP/s")
    '2.5 TFLOP/s'
    >>> rl.units.seconds(3.2e-5)
    '32 µs'
    >>> rl.units.nbytes(141e9)          # decimal, as datasheets count bandwidth and sizes
    '141 GB'
    >>> rl.units.gib(150.75e9)          # binary, as drivers report memory
    '140.4 GiB'
    >>> rl.units.flop_rate(989e12), rl.units.byte_rate(4.8e12)
    ('989 TFLOP/s', '4.8 TB/s')
    >>> rl.units.in_units(4.8e12, "T")  # a number, for a table column or a comparison
    4.8

Plain Python, no matplotlib: ``import roofline_lib`` stays light. The output matches matplotlib's
``EngFormatter`` (the axes of the course's figures) with trailing zeros trimmed.
"""

from __future__ import annotations

import math

# exponent of 10 -> SI prefix (the micro sign as matplotlib's EngFormatter writes it)
PREFIXES = {-24: "y", -21: "z", -18: "a", -15: "f", -12: "p", -9: "n", -6: "\N{MICRO SIGN}", -3: "m", 0: "",
            3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E", 21: "Z", 24: "Y"}
GIB = 2**30  # bytes in a gibibyte (binary; memory as drivers report it)
SECONDS_PER_HOUR = 3600.0  # chip-hours, prices per hour
SECONDS_PER_DAY = 86400.0
_BY_PREFIX = {p: e for e, p in PREFIXES.items()}
_BY_PREFIX["u"] = -6  # ASCII spelling of micro


def _number(value):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"needs a real number, got {value!r}") from None
    if isinstance(value, bool):
        raise ValueError(f"needs a real number, got {value!r}")
    return x


def eng(value, unit="", places=3):
    """``value`` in engineering notation: a mantissa in [1, 1000), an SI prefix, then ``unit``.

    At most ``places`` decimals, trailing zeros trimmed: eng(2.5e12, "FLOP/s") -> '2.5 TFLOP/s',
    eng(1.2345e-5, "s") -> '12.345 µs', eng(0, "B") -> '0 B'. Not finite: 'inf s', 'nan s'.

    Taught in chapter 06 (notebooks/06_optimizations.ipynb); also used in chapter 15.
    """
    x = _number(value)
    if not math.isfinite(x):
        return f"{x} {unit}".strip()
    if x == 0:
        exponent = 0
    else:
        exponent = int(math.floor(math.log10(abs(x)) / 3) * 3)
        exponent = max(min(exponent, 24), -24)
        # rounding to ``places`` decimals can reach 1000 (999.9996 -> 1000.000): then the next prefix
        if round(abs(x) / 10.0**exponent, places) >= 1000 and exponent < 24:
            exponent += 3
    mantissa = f"{x / 10.0**exponent:.{places}f}"
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    if mantissa == "-0":
        mantissa = "0"
    return f"{mantissa} {PREFIXES[exponent]}{unit}".rstrip()


def seconds(value, places=3):
    """A time: seconds(3.2e-5) -> '32 µs'.

    Taught in chapter 00 (notebooks/00_start_here.ipynb); also used in chapters 01, 02, 04, 05, 06, 07, 08, 09, 10,
    11, 15."""
    return eng(value, "s", places)


def nbytes(value, places=3):
    """A size in decimal bytes: nbytes(141e9) -> '141 GB'.

    Taught in chapter 00 (notebooks/00_start_here.ipynb); also used in chapters 03, 04, 05, 06, 09, 10, 11, 14."""
    return eng(value, "B", places)


def gib(value, places=1):
    """A size in binary gibibytes, as nvidia-smi and the OS report memory: gib(2**30 * 80) -> '80 GiB'.

    Taught in chapter 11 (notebooks/11_serving.ipynb)."""
    x = _number(value) / GIB
    text = f"{x:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} GiB"


def flop_rate(value, places=3):
    """FLOP/s: flop_rate(989e12) -> '989 TFLOP/s'.

    Taught in chapter 01 (notebooks/01_time_bounds_and_intensity.ipynb); also used in chapters 02, 03, 04, 06."""
    return eng(value, "FLOP/s", places)


def byte_rate(value, places=3):
    """Bytes per second (decimal, as bandwidth is quoted): byte_rate(4.8e12) -> '4.8 TB/s'.

    Taught in chapter 00 (notebooks/00_start_here.ipynb); also used in chapters 01, 02, 04, 09, 10."""
    return eng(value, "B/s", places)


def scale(prefix):
    """The factor of an SI prefix: scale("T") -> 1e12, scale("µ") or scale("u") -> 1e-6, scale("") -> 1."""
    if prefix not in _BY_PREFIX:
        raise ValueError(f"unknown SI prefix {prefix!r}; known: {', '.join(repr(p) for p in _BY_PREFIX)}")
    return 10.0 ** _BY_PREFIX[prefix]


def in_units(value, prefix):
    """``value`` (SI base units) expressed with ``prefix``: in_units(4.8e12, "T") -> 4.8. Vectorised.

    Taught in chapter 00 (notebooks/00_start_here.ipynb); also used in chapters 01, 02, 05, 06, 09, 10, 11, 13."""
    return value / scale(prefix)


__all__ = ["byte_rate", "eng", "flop_rate", "GIB", "gib", "in_units", "nbytes", "PREFIXES", "scale", "seconds",
           "SECONDS_PER_DAY", "SECONDS_PER_HOUR"]
