"""``python -m export ...``: the ``symshape`` command line (see :mod:`export.cli`)."""

import sys

from export.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
