"""`python -m acpkit_core.cli` runs the `acpkit` command (used by `acpkit chat` to spawn `acpkit run`)."""

import sys

from . import main

sys.exit(main())
