"""What every explorer shares: sliders on log scales, readouts in engineering notation,
and the build-once / update-in-place wiring."""

from __future__ import annotations

import html
import math

import ipywidgets
from matplotlib import pyplot as plt
from matplotlib.ticker import EngFormatter


def eng(value, unit="", places=3):
    """``eng(2.5e12, "FLOP/s")`` -> '2.5 TFLOP/s' (matplotlib's EngFormatter, no hand-made units)."""
    text = EngFormatter(unit=unit, places=places)(value)
    # EngFormatter pads with zeros ("2.500 T"); trim them for a readout.
    number, _, rest = text.partition(" ")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return f"{number} {rest}".strip()


def log_slider(description, low, high, value, *, base=10, step=None, readout_format=".3g", **kwargs):
    """A FloatLogSlider from ``low`` to ``high`` (values, not exponents)."""
    if not (0 < low <= value <= high):
        raise ValueError(f"log_slider {description!r} needs 0 < low <= value <= high, got {low}, {value}, {high}")
    lo, hi = math.log(low, base), math.log(high, base)
    return ipywidgets.FloatLogSlider(
        value=value, base=base, min=lo, max=hi, step=step or (hi - lo) / 200,
        description=description, readout_format=readout_format, continuous_update=True,
        style={"description_width": "initial"}, layout=ipywidgets.Layout(width="420px"), **kwargs,
    )


class Explorer:
    """Base of an explorer: subclasses set ``self.fig`` and artists in ``build()``, and move them
    in ``update(**values)``, which returns {label: text} for the readout.

    The figure is laid out once (constrained layout) after ``build()`` and then frozen: a layout
    pass costs about as much as drawing the figure, and moving artists does not change it. An
    explorer whose labels change size as it updates sets ``freeze_layout = False``.
    """

    freeze_layout = True

    def __init__(self, controls, figsize=(8, 4.5)):
        self.controls = dict(controls)
        self.figsize = figsize
        with plt.ioff():  # the figure is shown by widget() or static_figure(), not on creation
            self.fig = plt.figure(figsize=figsize, layout="constrained")
        self.build()
        self.readout = ipywidgets.HTML()
        self.last = self.update(**self.values())
        engine = self.fig.get_layout_engine()
        if self.freeze_layout and engine is not None:
            engine.execute(self.fig)
            self.fig.set_layout_engine("none")

    # -- for subclasses
    def build(self):
        raise NotImplementedError

    def update(self, **values):
        raise NotImplementedError

    # -- shared wiring
    def values(self):
        return {name: control.value for name, control in self.controls.items()}

    def _render_readout(self, numbers):
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td><b>{html.escape(str(v))}</b></td></tr>"
                       for k, v in numbers.items())
        self.readout.value = f'<table class="roofline-readout">{rows}</table>'

    def refresh(self, *_):
        """Read the controls, move the artists, redraw."""
        self.last = self.update(**self.values())
        self._render_readout(self.last)
        if isinstance(self.fig.canvas, ipywidgets.DOMWidget):
            # ipympl: draw_idle() asks the browser to ask back for a draw, a round trip per slider step;
            # draw() sends the new image at once. ipywidgets holds back further slider messages while
            # the kernel is busy, so fast dragging does not queue up draws.
            self.fig.canvas.draw()
        else:
            self.fig.canvas.draw_idle()
        return self.last

    def widget(self):
        """Controls, readout and figure in one box, live in JupyterLab."""
        for control in self.controls.values():
            control.observe(self.refresh, names="value")
        self._render_readout(self.last)
        canvas = self.fig.canvas
        if isinstance(canvas, ipywidgets.DOMWidget):  # ipympl
            canvas.header_visible = False
            canvas.toolbar_visible = False
            view = canvas
        else:  # an inline backend: redraw into an Output area
            view = ipywidgets.Output()

            def redraw(*_):
                from IPython.display import display

                view.clear_output(wait=True)
                with view:
                    display(self.fig)

            for control in self.controls.values():
                control.observe(redraw, names="value")
            redraw()
        return ipywidgets.VBox([ipywidgets.HBox(list(self.controls.values()),
                                                layout=ipywidgets.Layout(flex_flow="row wrap")),
                                self.readout, view])

    def static_figure(self):
        """The figure at the controls' current (default) values, for readers without a kernel."""
        self.update(**self.values())
        return self.fig
