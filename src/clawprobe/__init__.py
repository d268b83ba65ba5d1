"""clawprobe: proves whether an OpenClaw agent's memory search (QMD or builtin) is really healthy.

Packages, in pipeline order: :mod:`clawprobe.core` (the pure, typed library: probes, receipt, verdict rules,
repairs — never imports textual or rich), :mod:`clawprobe.cli` (the headless commands and the front door),
:mod:`clawprobe.tui` (the Textual dashboard, which only renders what ``core`` diagnosed). See ARCHITECTURE.md.
"""

__version__ = "0.2.0"
