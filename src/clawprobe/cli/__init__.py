"""The ``clawprobe`` command line: the front door (:mod:`.main`) and one module per headless command.

Importing this package tells pydantic that clawprobe uses no pydantic plugins, before any model is built:
pydantic otherwise looks for plugins in every installed distribution's entry points when it builds the
first model (≈ 40 ms with the test extras' 58 distributions, on the first frame's path). An operator's own
``PYDANTIC_DISABLE_PLUGINS`` is left to pydantic. ``clawprobe.core`` (a library) does not do this.
"""

import os


def _skip_plugin_scan() -> None:
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") is not None:
        return
    try:
        from pydantic.plugin import _loader
    except ImportError:  # a pydantic without plugin support: nothing to skip
        return
    if getattr(_loader, "_plugins", ()) is None:  # not loaded yet: "loaded, none" (pydantic ≥ 2.11 keeps it here)
        _loader._plugins = {}


_skip_plugin_scan()
