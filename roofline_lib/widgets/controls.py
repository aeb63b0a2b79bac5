"""An explorer's controls: sliders over log-spaced steps (``log_slider``, ``int_log_slider``), the model and
chip dropdowns, the values a slider can reach, and numbers for a readout (``plain``)."""

from __future__ import annotations

import math

import ipywidgets
from traitlets import TraitError, validate


def plain(x, figures=4):
    """A ratio (FLOP/byte, a rate per request) to about ``figures`` significant figures, never in exponent
    notation: plain(7.0831) -> '7.083', plain(101.12) -> '101.1', plain(104857.6) -> '104,858'."""
    x = float(x)
    if not math.isfinite(x) or x == 0:
        return f"{x:g}"
    decimals = max(0, figures - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


class LogSlider(ipywidgets.SelectionSlider):
    """A slider over a fixed list of positive numbers spaced on a log scale (``log_slider``, ``int_log_slider``).

    Its value is always one of them, so a default given to the constructor is a step the slider reaches.
    Setting a number that is not one of the steps (from code: ``control.value = 100``) moves the slider to
    the nearest step on the log scale, as dragging would."""

    @validate("value")
    def _validate_value(self, proposal):
        value = proposal.value
        if value is not None and value not in self._options_values:
            try:
                x = float(value)
            except (TypeError, ValueError):
                raise TraitError(f"{self.description}: needs a number, got {value!r}") from None
            if not (math.isfinite(x) and x > 0):
                raise TraitError(f"{self.description}: needs a number > 0, got {value!r}")
            value = min(self._options_values, key=lambda v: abs(math.log(v) - math.log(x)))
        return super()._validate_value(type(proposal)(proposal, value=value))


def log_slider(description, low, high, value, *, base=10, step=None, readout_format=None, **kwargs):
    """A slider from about ``low`` to ``high`` in steps of ``step`` in the exponent (base ``base``; 200 steps
    over the range by default), laid through ``value``: the default is exactly one of its steps.

    A real number that is not a count (an intensity): for whole quantities use ``int_log_slider``. The
    readout shows each step to 3 significant figures (``readout_format``, a format spec, to change it).
    """
    if not (0 < low <= value <= high):
        raise ValueError(f"log_slider {description!r} needs 0 < low <= value <= high, got {low}, {value}, {high}")
    lo, hi, at = math.log(low, base), math.log(high, base), math.log(value, base)
    step = step or (hi - lo) / 200
    below, above = math.floor((at - lo) / step + 1e-9), math.floor((hi - at) / step + 1e-9)
    values = [value * base ** (k * step) for k in range(-below, above + 1)]  # k = 0 is value itself
    label = (lambda v: format(v, readout_format)) if readout_format else (lambda v: plain(v, 3))
    return LogSlider(options=[(label(v), v) for v in values], value=value, description=description,
                     continuous_update=True, style={"description_width": "initial"},
                     layout=ipywidgets.Layout(width="420px"), **kwargs)


def log_steps(low, high, per_octave=4):
    """Whole numbers from ``low`` to ``high``, about ``per_octave`` per doubling: 1, 2, 3, 4, 5, 6, 7, 8, 10, 11,
    13, 16, 19, 23, 27, 32, ... (2 ** (k / per_octave), rounded, repeats dropped). Powers of two are always in."""
    low, high = int(low), int(high)
    if not (1 <= low <= high) or per_octave < 1:
        raise ValueError(f"log_steps needs 1 <= low <= high and per_octave >= 1, got {low}, {high}, {per_octave}")
    top = math.ceil(math.log2(high) * per_octave)
    values = {int(round(2 ** (k / per_octave))) for k in range(top + 1)} | {low, high}
    return sorted(v for v in values if low <= v <= high)


def int_log_slider(description, low, high, value, *, per_octave=4, **kwargs):
    """A ``LogSlider`` over the whole numbers ``log_steps(low, high, per_octave)`` and ``value`` (the default)."""
    if not (isinstance(value, int) or float(value).is_integer()) or not (low <= value <= high):
        raise ValueError(f"int_log_slider {description!r} needs a whole value in [{low}, {high}], got {value!r}")
    options = sorted(set(log_steps(low, high, per_octave)) | {int(value)})
    return LogSlider(options=options, value=int(value), description=description, continuous_update=True,
                     style={"description_width": "initial"}, layout=ipywidgets.Layout(width="420px"), **kwargs)


def model_and_chip(model, chip, chips, width="260px"):
    """The model and chip dropdowns the LLM and serving explorers share: every model in data/models/,
    the given chips; ``model`` and ``chip`` as any spelling the catalog accepts."""
    from ..specs.hardware import get_accelerator
    from ..specs.models import get_model, list_models

    style = dict(style={"description_width": "initial"}, layout=ipywidgets.Layout(width=width))
    return {"model": ipywidgets.Dropdown(options=list_models(with_steps=True), value=get_model(model).name,
                                         description="model", **style),
            "chip": ipywidgets.Dropdown(options=[get_accelerator(c).name for c in chips],
                                        value=get_accelerator(chip).name, description="chip", **style)}


def reachable(control):
    """The values a slider can take, in order (for tests: a default must be one of them)."""
    if isinstance(control, ipywidgets.SelectionSlider):
        return list(control._options_values)
    if isinstance(control, ipywidgets.FloatLogSlider):
        n = int(round((control.max - control.min) / control.step))
        return [control.base ** (control.min + k * control.step) for k in range(n + 1)]
    if isinstance(control, (ipywidgets.IntSlider, ipywidgets.FloatSlider)):
        n = int(round((control.max - control.min) / control.step))
        return [control.min + k * control.step for k in range(n + 1)]
    raise TypeError(f"not a slider: {type(control).__name__}")


__all__ = [
    "plain", "LogSlider", "log_slider", "log_steps", "int_log_slider", "model_and_chip", "reachable",
]
