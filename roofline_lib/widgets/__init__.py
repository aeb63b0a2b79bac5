"""Interactive explorers: figures built once and updated in place when a slider moves.

Each explorer is a class whose ``update(**values)`` is a plain function (it
moves the artists and returns the numbers it shows), so it is tested without a
browser; ``.widget()`` wires it to ipywidgets for JupyterLab (with
``%matplotlib widget`` the figure itself is an ipympl widget).
"""

from .base import Explorer, eng, log_slider

__all__ = ["Explorer", "eng", "log_slider"]
from .comms_explorer import CommsExplorer  # noqa: E402

__all__ += ["CommsExplorer"]
