"""Moved to :mod:`roofline_lib.teach.grade`; ``python -m roofline_lib.grade`` still works."""

import sys

from .teach.grade import *  # noqa: F403 - the old import path keeps working
from .teach.grade import __all__, main  # noqa: F401 - the same public names

if __name__ == "__main__":
    sys.exit(main())
