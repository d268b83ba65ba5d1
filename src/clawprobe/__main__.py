"""``python -m clawprobe`` runs the clawprobe command line."""

import sys

from clawprobe.cli.main import main

sys.exit(main())
