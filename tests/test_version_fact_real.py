"""``openclaw --version`` kept across processes (``core/probes/version_fact.py``) while the program that answers
is unchanged — and measured again when anything it is made of changes. Each call is a new Python process
(``clawprobe.core.probe.openclaw_version``) on the real OpenClaw 2026.9.6 of the test bed, through launchers
that count their runs: an npm-style package whose entry imports the real CLI, and a site wrapper naming
``node`` and the entry by absolute path. Changes: the package.json rewritten (an upgrade in place), the entry
copied over with ``cp -p`` (mtime kept), the ``node`` on PATH swapped for Node 20 (too old: the run fails and
is not kept), and a wrapper that finds its package at run time (nothing kept, ever)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testbed import OC_LATEST

CALL = """
import json, sys
from clawprobe.core.probe import openclaw_version
print(json.dumps(openclaw_version(json.loads(sys.argv[1]), json.loads(sys.argv[2]))))
"""


@pytest.fixture()
def package(testbed, tmp_path):
    """``tmp/lib/node_modules/openclaw``: a package.json named openclaw and an entry that counts its runs in
    ``runs.log`` and then runs the test bed's real CLI."""
    pkg = tmp_path / "lib" / "node_modules" / "openclaw"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "openclaw", "version": OC_LATEST,
                                                  "bin": {"openclaw": "openclaw.mjs"}}))
    real = testbed.openclaw_package(OC_LATEST) / "openclaw.mjs"
    (pkg / "openclaw.mjs").write_text(
        "#!/usr/bin/env node\n"
        'import { appendFileSync } from "node:fs";\n'
        'appendFileSync(new URL("./runs.log", import.meta.url), "run\\n");\n'
        f"await import({json.dumps(real.as_uri())});\n")
    (pkg / "openclaw.mjs").chmod(0o755)
    return pkg


def runs(pkg: Path) -> int:
    log = pkg / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def version(argv: list[str], node_dir: Path, cache: Path) -> tuple[str | None, str | None]:
    """``openclaw_version(argv, env)`` in a new process with ``node_dir`` first on the child's PATH."""
    env = {"PATH": f"{node_dir}:/usr/bin:/bin", "HOME": str(cache.parent)}
    p = subprocess.run([sys.executable, "-c", CALL, json.dumps(argv), json.dumps(env)], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "CLAWPROBE_CACHE_DIR": str(cache)})
    assert p.returncode == 0, p.stderr
    v, err = json.loads(p.stdout)
    return v, err


def node_dir(tmp_path: Path, node: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "node").symlink_to(node)
    return d


def test_an_npm_install_is_asked_once_until_its_package_changes(package, testbed, tmp_path):
    cache, n24 = tmp_path / "cache", node_dir(tmp_path, testbed.node, "node24")
    argv = [str(package / "openclaw.mjs")]
    assert version(argv, n24, cache) == (OC_LATEST, None)
    assert runs(package) == 1
    assert version(argv, n24, cache) == (OC_LATEST, None)  # a new process: the kept answer
    assert runs(package) == 1

    manifest = package / "package.json"  # an upgrade in place rewrites the manifest, the entry untouched
    manifest.write_text(manifest.read_text().replace('"bin"', '"description": "x", "bin"'))
    assert version(argv, n24, cache) == (OC_LATEST, None)
    assert runs(package) == 2

    copy = tmp_path / "entry.mjs"  # the same entry copied back over itself with its old mtime: a new ctime
    shutil.copy2(package / "openclaw.mjs", copy)
    subprocess.run(["cp", "-p", str(copy), str(package / "openclaw.mjs")], check=True)
    assert version(argv, n24, cache) == (OC_LATEST, None)
    assert runs(package) == 3


def test_a_node_too_old_on_path_is_measured_not_answered_from_the_kept_version(package, testbed, tmp_path):
    cache = tmp_path / "cache"
    argv = [str(package / "openclaw.mjs")]
    assert version(argv, node_dir(tmp_path, testbed.node, "node24"), cache) == (OC_LATEST, None)
    old = node_dir(tmp_path, testbed.node20, "node20")
    v, err = version(argv, old, cache)
    assert v is None and err  # OpenClaw 2026.9.x refuses Node 20
    assert runs(package) == 2  # asked again: another node answers
    assert version(argv, old, cache) == (None, err)
    assert runs(package) == 3  # a failure is not kept: measured again


def test_a_site_wrapper_naming_node_and_the_entry_is_kept(package, testbed, tmp_path):
    cache, empty = tmp_path / "cache", node_dir(tmp_path, testbed.node, "unused")
    wrapper = tmp_path / "bin" / "openclaw"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\n# site launcher\nexec "{testbed.node}" "{package / "openclaw.mjs"}" "$@"\n')
    wrapper.chmod(0o755)
    assert version([str(wrapper)], empty, cache) == (OC_LATEST, None)
    assert version([str(wrapper)], empty, cache) == (OC_LATEST, None)
    assert runs(package) == 1
    (package / "package.json").write_text((package / "package.json").read_text() + "\n")
    assert version([str(wrapper)], empty, cache) == (OC_LATEST, None)
    assert runs(package) == 2


def test_a_wrapper_that_finds_its_package_at_run_time_is_always_asked(package, testbed, tmp_path):
    cache, n24 = tmp_path / "cache", node_dir(tmp_path, testbed.node, "node24")
    wrapper = tmp_path / "bin" / "openclaw"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nroot="{package.parent}"\nexec node "$root/openclaw/openclaw.mjs" "$@"\n')
    wrapper.chmod(0o755)
    for n in (1, 2):
        assert version([str(wrapper)], n24, cache) == (OC_LATEST, None)
        assert runs(package) == n
    assert not list(cache.glob("facts/openclaw-version-*.json"))
