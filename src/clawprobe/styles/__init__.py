"""The dashboard's Textual CSS (``*.tcss``), shipped as package data."""

from pathlib import Path


def style_file(name: str) -> Path:
    """``clawprobe/styles/<name>`` (e.g. ``"app.tcss"``): the same path editable and installed."""
    return Path(__file__).resolve().parent / name
