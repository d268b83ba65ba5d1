"""A private, temporary QMD home for the store check: the binary and its native bindings are proven on an
index of clawprobe's own, never on the agent's.

qmd finds its index through ``INDEX_PATH``, else ``$XDG_CACHE_HOME/qmd/index.sqlite``, and its config
through ``QMD_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/qmd`` (qmd.md, ``src/store.ts`` / ``src/collections.ts``);
with ``INDEX_PATH`` set qmd does not create the directory, so it is made here. The directory is created
mode 0700 under the system temp dir and removed when the block ends, whatever the child did.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

SCRATCH_PREFIX = "clawprobe-qmd-scratch-"


@contextlib.contextmanager
def scratch_home() -> Iterator[tuple[dict[str, str], str]]:
    """``(env overrides, directory)`` of a fresh QMD home: ``XDG_CACHE_HOME``, ``XDG_CONFIG_HOME``,
    ``QMD_CONFIG_DIR`` and ``INDEX_PATH`` all inside ``directory`` (also the child's cwd). Removed on exit.
    Raises ``OSError`` when the temp dir cannot be made (a full or read-only ``$TMPDIR``)."""
    d = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
    try:
        cache, config = os.path.join(d, "cache"), os.path.join(d, "config")
        os.makedirs(os.path.join(cache, "qmd"))
        os.makedirs(os.path.join(config, "qmd"))
        yield {"XDG_CACHE_HOME": cache, "XDG_CONFIG_HOME": config, "QMD_CONFIG_DIR": os.path.join(config, "qmd"),
               "INDEX_PATH": os.path.join(cache, "qmd", "index.sqlite")}, d
    finally:
        shutil.rmtree(d, ignore_errors=True)
