"""The Node a gateway *service* would run OpenClaw with, and whether this OpenClaw supports it.

A unit that starts ``/opt/node20/bin/node …/openclaw.mjs gateway run`` crash-loops ("node:sqlite is unavailable")
while every ``openclaw`` command run from the operator's shell (Node 24) works: the shell proves nothing about the
service (breaker round 6). Measured, not guessed: the unit's ``ExecStart=`` (systemd.service(5): the last one;
its ``-@+!:`` prefixes dropped), the interpreter it names — a ``node`` binary, or the shebang of the script it
names (``#!/usr/bin/env node`` resolved on the service's PATH) —, that interpreter's own ``--version`` (bounded
run), and the Node range in the ``engines.node`` of the ``openclaw`` package the unit starts.

Ranges: npm comparator sets (``>=24.16.0 <25 || >=26.1.0``: every ``engines.node`` OpenClaw has shipped). A
range with other syntax (``^``, ``~``, ``x``) is not judged (``None``), never guessed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from clawprobe.core.probes.fileinfo import file_identity
from clawprobe.core.probes.qmd_binary import shebang, which
from clawprobe.core.proc import run

NODE_VERSION_TIMEOUT_S = 5.0
_NODE_NAME = re.compile(r"^node(js)?[-_.]?\d*$")
_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")
_COMPARATOR = re.compile(r"^(>=|<=|>|<|=)?v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


class ServiceRuntime(BaseModel):
    """What the service would run: ``node`` (path), its ``version`` (``None`` with ``error`` when it does not
    answer ``--version``), the ``entry`` script, the ``required`` range (``engines.node`` of the openclaw package
    beside ``entry``; ``None``: not found) and ``supported`` (``None``: not judged)."""

    model_config = ConfigDict(extra="forbid")
    node: str
    version: str | None = None
    error: str | None = None
    entry: str | None = None
    required: str | None = None
    supported: bool | None = None


def exec_start(settings: Sequence[tuple[str, str]]) -> list[str]:
    """The argv of the last ``ExecStart=`` of a unit's settings (:func:`systemd_unit.service_settings`; an empty
    one resets it), its ``-@+!:`` prefixes dropped; ``[]`` when none or not parseable (pure)."""
    line = None
    for key, value in settings:
        if key == "ExecStart":
            line = value or None
    try:
        argv = shlex.split(line) if line else []
    except ValueError:
        return []
    if argv:
        argv[0] = argv[0].lstrip("-@+!:")
    return [a for a in argv if a] if argv and argv[0] else []


def env_wrapper(argv: Sequence[str]) -> tuple[dict[str, str], bool, list[str]]:
    """``(assignments, cleared, program argv)`` of an ``env`` wrapper (``/usr/bin/env PATH=/usr/bin:/bin
    openclaw gateway``: env(1) starts the program with those variables set; ``-i``/``-``/``--ignore-environment``
    first clear the rest). Any other argv, or an env option this does not know (``-u``, ``-S``, ``-C``), is
    returned as it is with no assignments (pure)."""
    words = list(argv)
    if not words or os.path.basename(words[0]) != "env":
        return {}, False, words
    i, cleared, env = 1, False, {}
    while i < len(words) and words[i] in ("-i", "-", "--ignore-environment", "--"):
        cleared = cleared or words[i] != "--"
        i += 1
    if i < len(words) and words[i].startswith("-"):
        return {}, False, words
    while i < len(words) and "=" in words[i] and not words[i].startswith("="):
        k, v = words[i].split("=", 1)
        env[k] = v
        i += 1
    return (env, cleared, words[i:]) if i < len(words) else ({}, False, words)


def _resolve(cmd: str, path_dirs: Sequence[str]) -> str | None:
    if os.sep in cmd:
        return cmd if os.path.isfile(cmd) else None
    return which(cmd, path_dirs)


def interpreter(argv: Sequence[str], path_dirs: Sequence[str]) -> tuple[str | None, str | None]:
    """(the Node binary, the entry script) the service's ``argv`` runs, on its PATH ``path_dirs``; ``(None, None)``
    when it is not a Node program clawprobe can tell (a wrapper shell script, a missing file)."""
    if not argv:
        return None, None
    first = _resolve(argv[0], path_dirs)
    if first is None:
        return None, None
    if _NODE_NAME.match(os.path.basename(argv[0])):
        entry = next((a for a in argv[1:] if not a.startswith("-")), None)
        return first, entry
    bang = shebang(first)  # `#!/usr/bin/env node` → node, looked up on the service's PATH
    if bang and _NODE_NAME.match(os.path.basename(bang)):
        return _resolve(bang, path_dirs), first
    return None, None


def service_cli(argv: Sequence[str], path_dirs: Sequence[str]) -> list[str] | None:
    """The ``openclaw`` command line the service starts its gateway with: the words of ``argv`` before the
    ``gateway`` subcommand, the program resolved on the service's PATH ``path_dirs`` (``[…/bin/openclaw,
    --profile, work]``, ``[…/node, …/openclaw.mjs]``) — the build the gateway runs, which may not be the shell's
    (a unit pinned to 2026.7.35 beside a 2026.9.6 on the shell's PATH). ``None`` when ``argv`` starts no gateway or
    its program is not an executable file (pure apart from stat)."""
    words = list(argv)
    if "gateway" not in words[1:]:
        return None
    head = words[:words.index("gateway", 1)]
    prog = _resolve(head[0], path_dirs)
    if prog is None or not os.access(prog, os.X_OK):
        return None
    if _NODE_NAME.match(os.path.basename(head[0])) and not any(os.path.isfile(w) for w in head[1:]):
        return None  # node without its entry script
    return [prog, *head[1:]]


def engines_node(entry: str | None) -> str | None:
    """``engines.node`` of the ``openclaw`` package the entry script belongs to (its nearest ``package.json``
    named ``openclaw``, entry symlinks followed), else ``None``."""
    if not entry:
        return None
    d = os.path.dirname(os.path.realpath(entry))
    for _ in range(6):
        try:
            with open(os.path.join(d, "package.json"), encoding="utf-8") as f:
                pkg = json.load(f)
        except (OSError, ValueError):
            pkg = None
        if isinstance(pkg, dict) and pkg.get("name") == "openclaw":
            node = (pkg.get("engines") or {}).get("node")
            return node if isinstance(node, str) else None
        d = os.path.dirname(d)
    return None


def _parts(text: str) -> tuple[int, int, int] | None:
    m = _VERSION.match(text.strip())
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def satisfies(version: str, required: str) -> bool | None:
    """Whether Node ``version`` (``v20.20.2``) meets the npm range ``required`` made of comparator sets joined by
    ``||`` (pure); ``None`` for syntax beyond that. A partial bound (``<25``) means ``<25.0.0``."""
    v = _parts(version)
    if v is None:
        return None
    for alt in required.split("||"):
        ok = True
        for comp in alt.split():
            m = _COMPARATOR.match(comp)
            if m is None:
                return None
            op, bound = m[1] or "=", (int(m[2]), int(m[3] or 0), int(m[4] or 0))
            ok = ok and {">=": v >= bound, "<=": v <= bound, ">": v > bound, "<": v < bound, "=": v == bound}[op]
        if ok and alt.strip():
            return True
    return False


_CACHE: dict[tuple, ServiceRuntime] = {}  # (node and entry stat identity) -> measured: the dashboard re-probes


def measure(argv: Sequence[str], env: Mapping[str, str]) -> ServiceRuntime | None:
    """GATHER: the service's Node, its ``--version`` (at most :data:`NODE_VERSION_TIMEOUT_S`, output capped) and
    the range its OpenClaw requires; ``None`` when ``argv`` is not a Node program clawprobe can tell. Kept while
    the Node binary and the entry script are the same files (their stat identity)."""
    dirs = [d for d in env.get("PATH", "").split(os.pathsep) if d]
    node, entry = interpreter(argv, dirs)
    if node is None:
        return None
    key = (node, file_identity(node), entry, file_identity(entry) if entry else None)
    if key in _CACHE:
        return _CACHE[key]
    rt = _measure(node, entry, env)
    if key[1] is not None and rt.version is not None:
        _CACHE[key] = rt
    return rt


def _measure(node: str, entry: str | None, env: Mapping[str, str]) -> ServiceRuntime:
    p = run([node, "--version"], {"PATH": env.get("PATH", ""), "HOME": env.get("HOME", "/")},
            NODE_VERSION_TIMEOUT_S, max_output=4096)
    out = (p.stdout or "").strip()
    version = out if p.rc == 0 and _parts(out) else None
    required = engines_node(entry)
    err = None if version else (p.reason or (p.stderr or "").strip()[:200] or f"exit {p.rc}")
    ok = satisfies(version, required) if version and required else None
    return ServiceRuntime(node=node, version=version, error=err, entry=entry, required=required, supported=ok)
