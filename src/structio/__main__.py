"""``python -m structio``: the ``structio`` command."""

import sys

from structio.cli import main

sys.exit(main())
