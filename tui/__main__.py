"""``python -m tui`` runs the clawprobe command line."""

import sys

from tui.cli import main

sys.exit(main())
