"""clawprobe core: a pure, typed library (pydantic models, probes, verdict rules, receipts).

It never imports textual or rich (``tests/test_core_purity.py`` proves it in a subprocess).
"""

from clawprobe import __version__

__all__ = ["__version__"]
