"""clawprobe core: a pure, typed library (pydantic models, probes, verdict rules, receipts).

It never imports textual or rich (``tests/test_core_purity.py`` proves it in a subprocess).
"""

__version__ = "0.1.0"
