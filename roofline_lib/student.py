"""Moved to :mod:`roofline_lib.teach.student`; ``python -m roofline_lib.student`` still works."""

import sys

from .teach.student import *  # noqa: F403 - the old import path keeps working
from .teach.student import __all__, main  # noqa: F401 - the same public names

if __name__ == "__main__":
    sys.exit(main())
