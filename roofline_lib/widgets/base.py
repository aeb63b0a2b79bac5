"""What every explorer shares: the build-once / update-in-place wiring, a figure that redraws only what moves,
readouts in engineering notation, and static figures for pages without a kernel (its controls: ``controls``)."""

from __future__ import annotations

import html

import ipywidgets
from matplotlib import pyplot as plt
from matplotlib.backend_bases import DrawEvent
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator
from matplotlib.transforms import offset_copy

from ..core.units import eng  # noqa: F401  (readouts in engineering notation; rl.widgets.eng is the same function)


def freeze_layout(fig):
    """Lay ``fig`` out once and keep that layout, so a redraw only paints.

    Every slider event redraws the whole figure (ipympl has no blitting), and on
    log axes most of a draw is spent on things that never move: re-solving the
    constrained layout, drawing dozens of minor ticks, and re-measuring every tick
    label to place the titles and axis labels. After one full draw we pin the
    titles and labels where the automatic placement put them (in points from
    their axes, so a change of dpi keeps them right) and drop the minor ticks.
    """
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_locator(NullLocator())
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
        fig.set_layout_engine("none")
    # Measure without painting: a real canvas.draw() here would send ipympl a frame before the
    # browser shows the figure, and its next frame would then go out as an empty "diff".
    fig.draw_without_rendering()
    to_points = 72 / fig.dpi
    for ax in fig.axes:
        box = ax.get_window_extent()
        x_label = ax.xaxis.label.get_window_extent()
        y_label = ax.yaxis.label.get_window_extent()
        if ax.xaxis.label.get_text():
            dy = (x_label.y1 - box.y0) * to_points  # the label hangs from its top edge
            ax.xaxis.set_label_coords(0.5, 0, transform=offset_copy(ax.transAxes, fig=fig, y=dy, units="points"))
        if ax.yaxis.label.get_text():
            dx = (y_label.x1 - box.x0) * to_points  # rotated: its anchor is its right edge
            ax.yaxis.set_label_coords(0, 0.5, transform=offset_copy(ax.transAxes, fig=fig, x=dx, units="points"))
        if ax.get_title():
            ax.set_title(ax.get_title(), y=ax.title.get_position()[1], fontsize=ax.title.get_fontsize())


class LayeredFigure(Figure):
    """A figure that keeps what does not move as a bitmap, and paints only ``moving`` artists over it.

    A slider moves a marker and a line; the axes, ticks, labels and roofs stay put,
    yet a plain draw re-renders all of them, and text rendering is most of the
    cost. Here the first draw renders everything except ``moving`` and keeps a
    copy of the pixels; later draws restore that copy and draw the moving artists
    on top. Every draw still yields the whole picture (ipympl asks for full frames).
    The copy is remade when the canvas size or dpi changes, and whenever
    ``invalidate_background()`` is called, which an explorer must do after
    changing anything that is not in ``moving``. Moving artists must lie above
    the static ones (high zorder), so the result equals a full draw.
    ``savefig`` and any renderer other than the canvas's own Agg one get a
    plain full draw.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.moving = []
        self._background = None

    def invalidate_background(self):
        """Forget the cached static layer: the next draw renders everything again."""
        self._background = None

    def draw(self, renderer):
        """Draw the figure: the cached static layer, then only the moving artists (a full draw when saving, or when
        nothing is cached)."""
        canvas_renderer = getattr(self.canvas, "renderer", None)
        if (not self.moving or self.canvas.is_saving()  # savefig may draw with drawing switched off
                or not isinstance(renderer, RendererAgg) or renderer is not canvas_renderer):
            return super().draw(renderer)
        key = (renderer.width, renderer.height, self.dpi)
        if self._background is None or self._background[0] != key:
            shown = [artist.get_visible() for artist in self.moving]
            for artist in self.moving:
                artist.set_visible(False)
            try:
                super().draw(renderer)
            finally:
                for artist, visible in zip(self.moving, shown, strict=True):
                    artist.set_visible(visible)
            self._background = (key, renderer.copy_from_bbox(self.bbox))
        else:
            renderer.restore_region(self._background[1])
        for artist in sorted(self.moving, key=lambda a: a.get_zorder()):
            if artist.get_visible():
                artist.draw(renderer)
        self.stale = False
        DrawEvent("draw_event", self.canvas, renderer)._process()


def invalidate_background(fig):
    """Tell a LayeredFigure that its static layer changed (a no-op for other figures)."""
    if isinstance(fig, LayeredFigure):
        fig.invalidate_background()


def moving(fig, *artists):
    """Register ``artists`` as the ones a LayeredFigure repaints on every draw."""
    if isinstance(fig, LayeredFigure):
        fig.moving.extend(artists)


# The widest a live figure may be, in CSS pixels: a notebook's output area is ~930 px wide in a 1366 px
# JupyterLab window with the file browser open.
def live_figures_problem():
    """Why live (ipympl) figures cannot be shown here, or "" where they can."""
    import sys

    if "google.colab" in sys.modules:
        return "Colab's notebook does not show ipympl's figures"
    major = int(ipywidgets.__version__.split(".")[0])
    if major < 8:
        return f"ipywidgets {ipywidgets.__version__} is installed; the live figures need ipywidgets 8"
    try:
        import ipympl  # noqa: F401
    except ImportError:
        return "ipympl is not installed (pip install -r requirements.txt has it)"
    return ""


def live_figures():
    """``%matplotlib widget`` where live figures work, else ``%matplotlib inline`` with a note saying why: the
    explorers then redraw a still image at each slider step.

    Taught in chapter 02 (notebooks/02_roofline_model.ipynb); also used in chapters 03, 04, 05, 09, 11, 13, 14."""
    from IPython import get_ipython

    shell = get_ipython()
    why = live_figures_problem()
    backend = "inline" if why else "widget"
    if shell is not None:
        shell.run_line_magic("matplotlib", backend)
    if why:
        print(f"note: {why}: the explorers redraw a still figure at each slider step instead")


MAX_LIVE_WIDTH_PX = 880
FALLBACK = "live explorer: run the notebook; the figure above shows the defaults"


class ExplorerBox(ipywidgets.VBox):
    """The explorer's controls, readout and figure. Where no kernel draws widgets (GitHub, nbviewer,
    exported HTML) a notebook shows the text of an output instead: here a sentence saying what the
    reader would see, not the widget's repr (``VBox(children=(HBox(...``)."""

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:
            bundle["text/plain"] = FALLBACK
        return bundle


class Readout(dict):
    """{label: text} of an explorer's readout, printed as aligned lines."""

    def __str__(self):
        width = max((len(str(k)) for k in self), default=0)
        return "\n".join(f"{str(k) + ':':<{width + 1}} {v}" for k, v in self.items())

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))


class Explorer:
    """Base of an explorer: subclasses set ``self.fig`` and artists in ``build()``, and move them
    in ``update(**values)``, which returns {label: text} for the readout."""

    def __init__(self, controls, figsize=(8, 4.5)):
        self.controls = dict(controls)
        self.figsize = figsize
        with plt.ioff():  # the figure is shown by widget() or static_figure(), not on creation
            self.fig = plt.figure(figsize=figsize, layout="constrained", FigureClass=LayeredFigure)
        self.build()  # a subclass lists the artists its update() moves in self.fig.moving
        self.readout = ipywidgets.HTML()
        self.last = self.update(**self.values())
        freeze_layout(self.fig)
        self.laid_out()
        invalidate_background(self.fig)

    # -- for subclasses
    def build(self):
        """Make the figure's axes and artists once; list the ones ``update`` moves in ``self.fig.moving``."""
        raise NotImplementedError

    def update(self, **values):
        """Move the artists to the controls' ``values`` and return {label: text} for the readout; a ValueError for
        values the explorer cannot show."""
        raise NotImplementedError

    def laid_out(self):
        """Called once the layout is frozen: a subclass places labels that must keep clear of its lines here."""

    # -- shared wiring
    def values(self):
        """{control name: its value}: what ``update`` is called with."""
        return {name: control.value for name, control in self.controls.items()}

    def _render_readout(self, numbers):
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td><b>{html.escape(str(v))}</b></td></tr>"
                       for k, v in numbers.items())
        self.readout.value = f'<table class="roofline-readout">{rows}</table>'

    def refresh(self, *_):
        """Read the controls, move the artists, redraw.

        A combination the model refuses (ValueError, e.g. a causal mask with more
        queries than keys) is shown in the readout and leaves the figure as it was.
        """
        try:
            self.last = self.update(**self.values())
        except ValueError as exc:
            self.readout.value = f'<span style="color:#cf222e">{html.escape(str(exc))}</span>'
            return None
        self._render_readout(self.last)
        if isinstance(self.fig.canvas, ipywidgets.DOMWidget):
            # ipympl: draw_idle() asks the browser to ask back for a draw, a round trip per slider step;
            # draw() sends the new image at once. ipywidgets holds back further slider messages while
            # the kernel is busy, so fast dragging does not queue up draws.
            self.fig.canvas.draw()
        else:
            self.fig.canvas.draw_idle()
        return self.last

    def connect(self):
        """Make every control call ``refresh`` when its value changes (once, however often called)."""
        if not getattr(self, "_wired", False):
            for control in self.controls.values():
                control.observe(self.refresh, names="value")
            self._wired = True
        return self

    def widget(self):
        """Controls, readout and figure in one box, live in JupyterLab."""
        self.connect()
        self._render_readout(self.last)
        width_px = self.fig.get_figwidth() * self.fig.dpi
        if width_px > MAX_LIVE_WIDTH_PX:  # the same figure, drawn at fewer pixels per inch
            self.fig.set_dpi(self.fig.dpi * MAX_LIVE_WIDTH_PX / width_px)
            invalidate_background(self.fig)
        canvas = self.fig.canvas
        if isinstance(canvas, ipywidgets.DOMWidget):  # ipympl
            canvas.header_visible = False
            canvas.toolbar_visible = False
            # The size the browser draws the canvas at, set before it is shown, as ipympl does for a canvas shown
            # on its own. In a box ipympl sets it only on the browser's first message, and its resize message can
            # reach the browser before the size does: on a loaded machine the figure stayed 0 x 0 px.
            ratio = getattr(canvas, "device_pixel_ratio", 1)
            canvas._size = tuple(float(x) * self.fig.dpi / ratio for x in self.fig.get_size_inches())
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
        return ExplorerBox([ipywidgets.HBox(list(self.controls.values()),
                                            layout=ipywidgets.Layout(flex_flow="row wrap")),
                            self.readout, view])

    def readout_text(self):
        """The readout at the controls' current values as aligned lines (``print(explorer.readout_text())``)."""
        return Readout(self.last or {})

    def static_figure(self):
        """The figure at the controls' current (default) values, for readers without a kernel."""
        self.update(**self.values())
        return self.fig

    def static_image(self, dpi=80):
        """A PNG of the figure at the controls' current values (see ``snapshot``), at most
        ``MAX_LIVE_WIDTH_PX`` pixels wide (a wider figure is drawn at fewer dots per inch)."""
        self.update(**self.values())
        return snapshot(self.fig, dpi=static_dpi(self.fig, dpi), close=False)


def static_dpi(fig, dpi):
    """``dpi``, or less where the figure would be wider than ``MAX_LIVE_WIDTH_PX`` pixels at ``dpi``."""
    return min(dpi, MAX_LIVE_WIDTH_PX / fig.get_figwidth())


def snapshot(fig, dpi=80, close=True):
    """The figure as a PNG (an IPython Image), closed afterwards unless ``close=False``.

    Under ``%matplotlib widget`` displaying a figure shows a live canvas, which a
    notebook viewer without a kernel (GitHub, exported HTML) cannot draw; a PNG
    always shows. Create the figure inside ``with plt.ioff():`` so that it is not
    also displayed live.

    Taught in chapter 02 (notebooks/02_roofline_model.ipynb); also used in chapter 09.
    """
    import io

    from IPython.display import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    if close:
        plt.close(fig)
    return Image(data=buffer.getvalue(), format="png")


__all__ = [
    "Explorer", "ExplorerBox", "FALLBACK", "freeze_layout", "invalidate_background", "LayeredFigure",
    "MAX_LIVE_WIDTH_PX", "moving", "Readout", "snapshot", "static_dpi"
]
