"""roofline_lib.core.checks: what a valid size (``positive``) and a valid data figure (``figure``) are."""

import math

import numpy as np
import pytest

from roofline_lib.core.checks import figure, figure_problem, positive


@pytest.mark.parametrize("value, expected", [(3, 3), (2.5, 2.5), (np.int64(7), 7), (np.float32(0.5), 0.5),
                                             (np.array(4), 4)])
def test_positive_scalars_come_back_as_python_numbers(value, expected):
    out = positive("size", value)
    assert out == expected and type(out) in (int, float)


def test_positive_sequences_come_back_as_float_arrays():
    out = positive("size", [1, 2, 3])
    assert isinstance(out, np.ndarray) and out.dtype == float and list(out) == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("bad, message", [
    (0, "must be finite and > 0, got"), (-1, "must be finite and > 0"), (math.nan, "must be finite and > 0"),
    (math.inf, "must be finite and > 0"), ([1, 0, 2], "must be finite and > 0, got"), ([], "must not be empty"),
    (True, "must be a positive number"), (None, "must be a positive number"), ("8", "must be a positive number"),
    (1 + 2j, "real positive number"), ([["a"]], "or an array of them"),
])
def test_positive_refuses_and_names_the_argument(bad, message):
    with pytest.raises(ValueError, match=message) as info:
        positive("batch", bad)
    assert str(info.value).startswith("batch ")


def test_the_refusal_shows_the_number_as_the_reader_typed_it():
    with pytest.raises(ValueError, match=r"got 0\b") as info:
        positive("batch", [1, 0, 2])
    assert "np.float64" not in str(info.value)


@pytest.mark.parametrize("bad", [1.5, np.float64(2.5), [1, 2.5]])
def test_positive_integer_refuses_fractions(bad):
    with pytest.raises(ValueError, match="whole number"):
        positive("batch", bad, integer=True)
    assert positive("batch", 4.0, integer=True) == 4.0


def test_figure_problem_says_what_is_wrong():
    assert figure_problem(1.5) is None and figure_problem(3, integer=True) is None
    assert figure_problem(0, zero_ok=True) is None
    assert figure_problem(True) == "must be a number, got True"
    assert figure_problem("3") == "must be a number, got '3'"
    assert figure_problem(2.0, integer=True) == "must be a whole number, got 2.0"
    assert figure_problem(0) == "must be finite and > 0, got 0"
    assert figure_problem(-1, zero_ok=True) == "must be finite and >= 0, got -1"
    assert figure_problem(math.nan) == "must be finite and > 0, got nan"


def test_figure_returns_a_float_or_raises_with_the_name():
    assert figure("bandwidth", 3) == 3.0 and type(figure("bandwidth", 3)) is float
    assert figure("layers", 32, integer=True) == 32 and type(figure("layers", 32, integer=True)) is int
    with pytest.raises(ValueError, match="^bandwidth must be finite and > 0, got -2$"):
        figure("bandwidth", -2)
