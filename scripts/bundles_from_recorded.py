#!/usr/bin/env python3
"""Convert the recorded evidence directories (tests/data/rw/<case>/) into support bundles
(tests/data/bundles/<case>.json, the ``clawprobe bundle`` format, :mod:`clawprobe.core.bundle`).

Each directory is read with :func:`clawprobe.core.recorded.evidence_of` (the raw program outputs through the
live probes' parsers) and written as a one-agent bundle; the directory's absolute path is replaced by
:data:`ROOT_MARK` (and the repository's tests/data by ``/recorded/data``: no machine path in the
repository; interpret never touches the file system). The creation time is the recorded check time, so the output is reproducible.

Usage: ``scripts/bundles_from_recorded.py [--check]`` (``--check``: exit 1 when a committed bundle differs).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from clawprobe.core.bundle import bundle_text, make_bundle  # noqa: E402
from clawprobe.core.recorded import evidence_of, load_bundle  # noqa: E402

SRC = REPO / "tests" / "data" / "rw"
OUT = REPO / "tests" / "data" / "bundles"
ROOT_MARK = "/recorded"


def converted(case_dir: Path) -> str:
    """The bundle text of one recorded directory."""
    b = load_bundle(case_dir)
    ev = evidence_of(b)
    text = bundle_text(make_bundle([ev], b.spec.checked_at, clawprobe_version=None))
    return text.replace(b.root, f"{ROOT_MARK}/{case_dir.name}").replace(str(REPO / "tests" / "data"), f"{ROOT_MARK}/data")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    OUT.mkdir(parents=True, exist_ok=True)
    stale = []
    for d in sorted(p for p in SRC.iterdir() if (p / "bundle.json").is_file()):
        text = converted(d)
        dest = OUT / f"{d.name}.json"
        if check:
            if not dest.is_file() or dest.read_text(encoding="utf-8") != text:
                stale.append(dest.name)
        else:
            dest.write_text(text, encoding="utf-8")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
