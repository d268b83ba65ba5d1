"""What ``openclaw --version`` answered, kept across processes while the program that answered is unchanged.

``openclaw --version`` is a Node start (≈ 0.05 s of CPU here, far more on a small server) that every discovery
runs — in each one-shot ``clawprobe check`` and on the live dashboard's first-frame path. Its answer is a fact
about files: the ``openclaw`` npm package that answers, its entry script, and the ``node`` that runs it. So an
answer is stored in clawprobe's fact cache (:mod:`clawprobe.core.probes.fact_cache`) under the identity of
those files, and a later process reuses it only while every one of them is unchanged (real path, inode, size,
mtime and ctime in ns: a reinstall, an upgrade in place or a ``cp -p`` over a file changes its inode or ctime):

* each argv file (the CLI's link, or ``node`` and the script);
* each existing file a small launcher script among them names by absolute path (a site wrapper
  ``exec /opt/node/bin/node /opt/openclaw/openclaw.mjs "$@"``);
* the ``package.json`` of the ``openclaw`` package those files lie in (three levels up at most): an upgrade in
  place that left the entry script alone still changes it;
* the ``node`` the child's ``PATH`` resolves (a script runs through ``#!/usr/bin/env node``: a Node too old
  for this OpenClaw makes ``--version`` fail).

When no file names an ``openclaw`` package (a wrapper that finds it at run time: ``$(npm root -g)/…``), an
upgrade could change the answer without changing any file the identity holds: nothing is kept, and every
process runs ``--version``. Only a parsed version is kept; a failure is measured again by the next process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
from collections.abc import Iterator, Mapping, Sequence

#: the fact cache's kind for these documents
FACT_KIND = "openclaw-version"
_PACKAGE_LEVELS = 3
_LAUNCHER_MAX_BYTES = 8192


def file_identity(path: str) -> list:
    """``[realpath, inode, size, mtime_ns, ctime_ns]`` of ``path`` (following links); ``[path]`` when it cannot be
    stat'ed (an argument that is not a file, e.g. a flag)."""
    with contextlib.suppress(OSError):
        st = os.stat(path)
        return [os.path.realpath(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    return [path]


def _openclaw_package(path: str) -> str | None:
    """The ``package.json`` of the ``openclaw`` package (its ``name`` ends in ``openclaw``) that ``path``'s real
    path lies in, looking :data:`_PACKAGE_LEVELS` dirs up; ``None`` outside one."""
    d = os.path.dirname(os.path.realpath(path))
    for _ in range(_PACKAGE_LEVELS):
        candidate = os.path.join(d, "package.json")
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as f:
                    name = json.load(f).get("name")
            except (OSError, ValueError, AttributeError):
                return None
            return candidate if isinstance(name, str) and name.endswith("openclaw") else None
        d = os.path.dirname(d)
    return None


def _named_files(path: str) -> Iterator[str]:
    """The existing files a small launcher script (``#!``, ≤ 8 KiB of text) names by absolute path."""
    try:
        with open(path, "rb") as f:
            head = f.read(_LAUNCHER_MAX_BYTES + 1)
    except OSError:
        return
    if not head.startswith(b"#!") or len(head) > _LAUNCHER_MAX_BYTES:
        return
    for line in head.decode("utf-8", "replace").splitlines()[1:]:
        with contextlib.suppress(ValueError):
            for w in shlex.split(line, comments=True):
                if w.startswith("/") and os.path.isfile(w):
                    yield w


def identity(argv: Sequence[str], env: Mapping[str, str]) -> list:
    """``[argv files, files launchers name, openclaw package.json files, node on PATH]``, each as
    :func:`file_identity` (JSON-able; see the module doc). ``env``: the child's environment."""
    named = [w for a in argv if os.path.isfile(a) for w in _named_files(a)]
    packages = sorted({p for f in [*argv, *named] if os.path.isfile(f) and (p := _openclaw_package(f))})
    path = env.get("PATH") or ""
    node = shutil.which("node", path=path) if path else None
    return [[file_identity(a) for a in argv], [file_identity(w) for w in named], [file_identity(p) for p in packages],
            file_identity(node) if node else None]


def keepable(key: list) -> bool:
    """Whether an answer under ``key`` (:func:`identity`) may be kept: some file names the ``openclaw`` package."""
    return bool(key[2])


def load(argv: Sequence[str], key: list) -> str | None:
    """The version an earlier process read from this same program (``key``: :func:`identity`), or ``None``
    (never read, changed since, unreadable cache)."""
    from clawprobe.core.probes import fact_cache

    if not keepable(key):
        return None
    data = fact_cache.load(FACT_KIND, "\0".join(argv), key)
    return data if isinstance(data, str) and data else None


def save(argv: Sequence[str], key: list, version: str, *, keep_out: str | None = None) -> None:
    """Keep ``version`` for this program under ``key`` (:func:`identity`, taken before it ran); atomic, never
    raises, never inside ``keep_out`` (the OpenClaw state dir); nothing when the key is not :func:`keepable`."""
    from clawprobe.core.probes import fact_cache

    if keepable(key):
        fact_cache.save(FACT_KIND, "\0".join(argv), key, version, keep_out=keep_out)


def forget() -> None:
    """Remove every kept answer (tests and benchmarks that want a cold discovery)."""
    from clawprobe.core.probes import fact_cache

    fact_cache.forget(FACT_KIND)
