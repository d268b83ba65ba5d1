"""What clawprobe understands: the one allow-list of program versions its rules were measured on.

clawprobe's facts about OpenClaw (config layout, CLI output, store schema, where things live) were measured on
real builds; a build outside those ranges — newer than the newest measured, between the last QMD build and the
first builtin-only one — may have changed any of them. A prerelease or build of a release inside a range
(``2026.8.1-beta.2``, ``2026.9.1-beta.1``: published on the npm registry) is read as that release. Such evidence is *not understood*: a
check never calls it healthy (``rules.unverified``, sub-reason ``not_understood``) and never applies the exact
schema of a measured build to it. Extend the ranges here (and only here) once a build has been measured.
"""

from __future__ import annotations

import re

from clawprobe.core.locate import calver

#: OpenClaw release ranges measured (inclusive): the QMD era up to the newest QMD build measured, and the
#: builtin-only era from the release that removed QMD up to the newest build measured
OPENCLAW_UNDERSTOOD: tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...] = (
    ((2000, 1, 0), (2026, 7, 35)),
    ((2026, 8, 1), (2026, 9, 6)),
)
#: qmd releases measured (inclusive): every recorded qmd 2.x up to the test bed's 2.8.3 — an older qmd is not
#: unhealthy by itself (spec §1), a newer one may have changed its store, output or collections
QMD_UNDERSTOOD = ((0, 0, 0), (2, 8, 3))
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_RELEASE = re.compile(r"^\d{4}\.\d{1,2}\.\d{1,3}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")


def _ranges(spans: tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...]) -> str:
    return ", ".join(f"{'.'.join(map(str, lo))}–{'.'.join(map(str, hi))}" if lo[0] > 2000 else
                     f"≤ {'.'.join(map(str, hi))}" for lo, hi in spans)


def openclaw_version_gap(version: str | None) -> str | None:
    """Why clawprobe does not understand OpenClaw ``version`` (a sentence naming it), or ``None`` when it is a
    release inside :data:`OPENCLAW_UNDERSTOOD` — or unknown (``None``: the missing version is a probe error of
    its own, reported elsewhere)."""
    if not version:
        return None
    v = calver(version)
    measured = _ranges(OPENCLAW_UNDERSTOOD)
    if v is None or not _RELEASE.match(version.strip()):
        return (f"OpenClaw {version} is not a release clawprobe has measured (measured: {measured}): its config "
                "layout, CLI output and stores may differ from what the rules read")
    if not any(lo <= v <= hi for lo, hi in OPENCLAW_UNDERSTOOD):
        return (f"OpenClaw {version} is outside the releases clawprobe has measured ({measured}): its config "
                "layout, CLI output and stores may differ from what the rules read")
    return None


def openclaw_understood(version: str | None) -> bool:
    """Whether ``version`` is a measured OpenClaw release (:func:`openclaw_version_gap` finds nothing)."""
    return bool(version) and openclaw_version_gap(version) is None


def qmd_version_gap(version: str | None) -> str | None:
    """Why clawprobe does not understand qmd ``version`` (as ``qmd --version`` printed it, e.g. ``2.9.0``), or
    ``None`` for a release up to the newest measured (:data:`QMD_UNDERSTOOD`) — or an unknown version (``None``:
    a qmd that prints none is judged elsewhere)."""
    if not version:
        return None
    m = _SEMVER.match(version.strip())
    lo, hi = QMD_UNDERSTOOD
    newest = ".".join(map(str, hi))
    if m is None:
        return (f"qmd {version} is not a release clawprobe has measured (measured: ≤ {newest}): its store, "
                "output and collections may differ from what the rules read")
    if not lo <= (int(m[1]), int(m[2]), int(m[3])) <= hi:
        return (f"qmd {version} is newer than the releases clawprobe has measured (≤ {newest}): its store, "
                "output and collections may differ from what the rules read")
    return None


def index_order_gap(version: str | None, identity: str | None, order: str | None, reason: str | None) -> str | None:
    """Why clawprobe does not understand the builtin index (a sentence), or ``None``: OpenClaw's status says the
    index identity is ``mismatched`` with ``versionOrder: newer`` (2026.9.6: a ``chunkingVersion`` or
    ``provenanceVersion`` above its own — "the index was written by a newer OpenClaw version; upgrade OpenClaw or
    reindex explicitly"). A newer build than the one asked wrote it — one clawprobe may not have measured, and
    maybe the gateway's own —, so neither "index again" nor "upgrade" is known to be the repair."""
    if identity != "mismatched" or order != "newer":
        return None
    return (f"the builtin index was written by a newer OpenClaw than {f'OpenClaw {version}' if version else 'the one asked'}"
            f" (its status: {reason or 'index identity mismatched, versionOrder newer'}): which build should own the "
            "index — upgrade to the one that wrote it, or reindex explicitly with this one — cannot be read from "
            "here, and this build serves nothing from it until then")


def qmd_command_gap(command: str | None, failure: str | None, detail: str | None, shape: str | None) -> str | None:
    """Why clawprobe does not understand the configured qmd command (a sentence), or ``None``: its ``--version``
    does not identify as qmd (``failure`` ``not_qmd``) yet OpenClaw's own ``memory search`` through it returned
    qmd-shaped hits (``shape``). OpenClaw does not need that line (2026.7.35 ``readQmdRuntimeIdentity`` only keys a
    cache with it, an empty answer included), so a wrapper that runs the real qmd for everything else works for
    OpenClaw and cannot be told from a program that is not qmd. Only for a command with a path (absolute, or
    relative to the workspace: the same file for the CLI and the gateway); a bare name may resolve elsewhere on
    the gateway's PATH."""
    if failure != "not_qmd" or shape != "qmd" or not command or "/" not in command:
        return None
    return (f"qmd command {command!r} does not identify as qmd ({detail or 'its `--version` answer'}), yet OpenClaw's "
            "own memory search through it returned qmd's hits: a wrapper clawprobe cannot identify (OpenClaw reads "
            "`--version` only as a cache key) — its qmd version and store are not checked; a `--version` that "
            "passes qmd's own line through lets clawprobe check them")
