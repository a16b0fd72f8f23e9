"""``python -m benchgen`` = the ``benchgen`` command."""

import sys

from benchgen.cli import main

sys.exit(main())
