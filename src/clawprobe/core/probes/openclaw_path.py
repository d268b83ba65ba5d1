"""The PATH an OpenClaw process really runs its children with — not the PATH its service file or ``/proc`` shows.

OpenClaw 2026.7.35 rewrites its own ``process.env.PATH`` when the gateway starts (``src/infra/path-env.ts``
``ensureOpenClawCliOnPath``, called at the top of ``server.impl``; the CLI does the same), so ``/proc/<pid>/environ``
and a unit's ``Environment=PATH=`` are only its input. Measured on the real 2026.7.35 CLI with a qmd that logged its
PATH: a shell PATH ``/x/bin:/usr/bin:/bin`` reached qmd as ``<node dir>:/usr/bin:/bin:/x/bin:/usr/local/bin``.

The rewrite (Linux): prepend the running Node's bin dir, ``/usr/bin``, ``/bin``; keep the existing entries; append
the Homebrew dirs (``~/.linuxbrew/{bin,sbin}``, ``/home/linuxbrew/.linuxbrew/{bin,sbin}``, ``/opt/homebrew/bin``,
``/usr/local/bin``), ``$PNPM_HOME`` and ``$PNPM_HOME/bin``, ``$NPM_CONFIG_PREFIX/bin``, mise's shims, ``$XDG_BIN_HOME``,
``~/.local/bin``, ``~/.npm-global/bin``, ``~/.local/share/pnpm/bin``, ``~/.local/share/pnpm``, ``~/.bun/bin``,
``~/.yarn/bin`` — each only when it is already on PATH or is a directory; duplicates dropped, first kept. Skipped when
``OPENCLAW_PATH_BOOTSTRAPPED`` is already set. The qmd manager then appends its Node's dir if still missing
(``qmd-manager`` ``buildQmdProcessPath``). Which builds do this is :func:`clawprobe.core.locate.adds_node_dir_to_qmd_path`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

BREW_DIRS = ("/home/linuxbrew/.linuxbrew/bin", "/home/linuxbrew/.linuxbrew/sbin", "/opt/homebrew/bin", "/usr/local/bin")
HOME_BIN_DIRS = (".local/bin", ".npm-global/bin", ".local/share/pnpm/bin", ".local/share/pnpm", ".bun/bin",
                 ".yarn/bin")


def _root(value: str | None) -> str | None:
    """A package-manager root OpenClaw trusts: absolute, normalized, never under ``/proc``."""
    v = (value or "").strip()
    if not v or not os.path.isabs(v):
        return None
    v = os.path.normpath(v)
    return None if v == "/proc" or v.startswith("/proc/") else v


def bootstrap_path(path_dirs: Sequence[str], node_dir: str | None, env: Mapping[str, str]) -> list[str]:
    """The PATH dirs after OpenClaw's start-up rewrite (module doc) of ``path_dirs`` for a process whose
    environment is ``env`` (``HOME``, ``PNPM_HOME``, ``NPM_CONFIG_PREFIX``, ``MISE_DATA_DIR``, ``XDG_BIN_HOME``)
    running under the Node in ``node_dir`` (``None``: unknown, not prepended). Reads only whether dirs exist."""
    existing = [d.strip() for d in path_dirs if d and d.strip()]
    if (env.get("OPENCLAW_PATH_BOOTSTRAPPED") or "").strip().lower() in ("1", "true", "yes", "on"):
        return existing
    home = env.get("HOME") or ""
    prepend = [*([node_dir] if node_dir else []), "/usr/bin", "/bin"]
    append = [os.path.join(home, ".linuxbrew", "bin"), os.path.join(home, ".linuxbrew", "sbin")] if home else []
    append += list(BREW_DIRS)
    if pnpm := _root(env.get("PNPM_HOME")):
        append += [pnpm, os.path.join(pnpm, "bin")]
    if npm := _root(env.get("NPM_CONFIG_PREFIX")):
        append.append(os.path.join(npm, "bin"))
    mise = env.get("MISE_DATA_DIR") or (os.path.join(home, ".local", "share", "mise") if home else "")
    if mise:
        append.append(os.path.join(mise, "shims"))
    if env.get("XDG_BIN_HOME"):
        append.append(env["XDG_BIN_HOME"])
    append += [os.path.join(home, d) for d in HOME_BIN_DIRS] if home else []
    known = set(existing)
    keep = [d for d in (*prepend, *existing, *append) if d in known or os.path.isdir(d)]
    return list(dict.fromkeys(keep))
