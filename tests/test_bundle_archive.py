"""``clawprobe bundle -o FILE.tar.gz``: the support bundle as one archive — ``bundle.json`` (the same document as
the JSON form) and a ``README.txt`` saying what it holds and how to diagnose it — and ``clawprobe check --bundle``
reads both forms the same way (told by the gzip magic bytes, never extracted to disk)."""

from __future__ import annotations

import io
import json
import tarfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from clawprobe.cli.main import main
from clawprobe.core.bundle import (
    ARCHIVE_MEMBER,
    ARCHIVE_README,
    BundleFileError,
    archive_bytes,
    bundle_text,
    read_bundle,
    write_bundle,
)

DATA = Path(__file__).parent / "data" / "bundles"


def _check(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(["check", "--bundle", str(path), "--json"])
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", ["RW13", "RW44-fallback", "RW28"])
def test_an_archive_bundle_holds_the_json_and_a_readme_and_diagnoses_the_same(case, tmp_path):
    b = read_bundle(str(DATA / f"{case}.json"))
    f = tmp_path / "support.tar.gz"
    write_bundle(b, str(f))
    assert f.stat().st_mode & 0o077 == 0
    with tarfile.open(f, "r:gz") as tar:
        assert tar.getnames() == [ARCHIVE_MEMBER, ARCHIVE_README]
        doc = tar.extractfile(ARCHIVE_MEMBER).read().decode("utf-8")  # type: ignore[union-attr]
        readme = tar.extractfile(ARCHIVE_README).read().decode("utf-8")  # type: ignore[union-attr]
    assert doc == bundle_text(b)
    assert "clawprobe check --bundle" in readme and "No service environment" in readme and b.agents[0].agent_id in readme
    assert archive_bytes(b) == f.read_bytes()  # the same bytes for the same bundle
    plain = tmp_path / "support.json"
    write_bundle(b, str(plain))
    assert plain.read_text(encoding="utf-8") == bundle_text(b)
    (rc_a, out_a, _), (rc_j, out_j, _) = _check(f), _check(plain)
    a, j = json.loads(out_a)["receipts"], json.loads(out_j)["receipts"]
    assert rc_a == rc_j and [(r["verdict"], r["reason"], r["next_action"]) for r in a] == \
        [(r["verdict"], r["reason"], r["next_action"]) for r in j]
    renamed = tmp_path / "support.bin"  # the form is told by its bytes, not its name
    renamed.write_bytes(f.read_bytes())
    assert read_bundle(str(renamed)).model_dump() == b.model_dump()


def test_an_archive_that_is_not_a_bundle_is_said_not_a_traceback(tmp_path):
    other = tmp_path / "other.tar.gz"
    with tarfile.open(other, "w:gz") as tar:
        data = b"hello"
        info = tarfile.TarInfo("notes.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(BundleFileError, match="without a bundle.json"):
        read_bundle(str(other))
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(other.read_bytes()[:40])
    with pytest.raises(BundleFileError, match="not a readable tar.gz archive"):
        read_bundle(str(broken))
    rc, out, err = _check(broken)
    assert rc == 3 and "not a readable tar.gz archive" in err and "Traceback" not in err + out


@pytest.mark.parametrize("shape", ["list", "object", "inside_a_bundle"])
def test_a_bundle_nested_too_deeply_is_said_not_a_traceback(shape, tmp_path):
    """Breaker round 24: ``check --bundle`` on JSON nested 10,000 levels deep died with a RecursionError
    traceback (``replay`` already said "nested too deeply")."""
    deep = {"list": "[" * 10_000 + "]" * 10_000,
            "object": '{"a":' * 10_000 + "1" + "}" * 10_000,
            "inside_a_bundle": '{"format": "clawprobe-bundle", "version": 1, "evidence": '
                               + "[" * 10_000 + "]" * 10_000 + "}"}[shape]
    f = tmp_path / "deep.json"
    f.write_text(deep)
    with pytest.raises(BundleFileError, match="nested too deeply"):
        read_bundle(str(f))
    rc, out, err = _check(f)
    assert rc == 3 and "nested too deeply" in err and "Traceback" not in err + out
    assert json.loads(out)["errors"], out


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_bundle_path_that_is_no_regular_file_is_refused_without_blocking(kind, tmp_path):
    """Breaker round 24: ``check --bundle FIFO`` blocked forever in open() waiting for a writer. A FIFO, device or
    directory is refused at once, as ``replay`` refuses it."""
    import os
    import subprocess
    import sys

    f = tmp_path / "support.json"
    os.mkfifo(f) if kind == "fifo" else f.mkdir()
    with pytest.raises(BundleFileError, match="not a regular file|is a directory"):
        read_bundle(str(f))
    root = Path(__file__).resolve().parent.parent
    p = subprocess.run([sys.executable, "-m", "clawprobe", "check", "--bundle", str(f), "--json"],
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
                            "PYTHONPATH": str(root / "src"), "CLAWPROBE_DATA_DIR": str(tmp_path / "data")},
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert p.returncode == 3 and ("not a regular file" in p.stderr or "is a directory" in p.stderr), p.stderr
    assert "Traceback" not in p.stderr and json.loads(p.stdout)["errors"], p.stdout
