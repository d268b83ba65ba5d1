"""The ``clawprobe`` command line: the front door (:mod:`.main`) and one module per headless command."""
