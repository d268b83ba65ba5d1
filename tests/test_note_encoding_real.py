"""Notes saved as UTF-16 (Windows PowerShell 5.1's ``>``, Notepad's "Unicode"): OpenClaw 2026.9.6 reads every note as
UTF-8, indexes the file — as bytes — and no search ever matches its words; clawprobe said ``healthy``,
``coverage ok`` (breaker round 5). Now ``retrieval_failed`` · ``note_encoding`` from the bytes on disk; the repair
(convert to UTF-8, index) is run and the note's word is found. A git-crypt note beside it is a
``binary_notes`` warning and stays out of the list to convert. Real 2026.9.6: two index runs, a check, two
searches."""

from __future__ import annotations

import json
import subprocess

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes.note_scripts import UTF16, decode_note
from tests.hardening_helpers import check_env, planted_and_indexed, run_clawprobe
from tests.rw_support import context, indexed
from tests.testbed import OC_LATEST, builtin_config, run_openclaw


def test_decode_note_tells_utf16_from_utf8_with_a_stray_nul():
    text = "# ps\n\nThe vault code is PEACH-UTF16-93.\n"
    assert all(decode_note(text.encode(codec))[1] for codec in ("utf-16", "utf-16-le", "utf-16-be"))  # BOM or not
    assert decode_note(text.encode("utf-16")) == (text, True) and decode_note(text.encode("utf-16-le"))[0] == text
    blob = ("# blob\n\nKIWI-NUL-91 " + "x" * 150 + "\x00 end\n").encode()  # one NUL in UTF-8 text: not UTF-16
    assert decode_note(blob)[1] is False and decode_note("só\n".encode())[1] is False


def test_a_utf16_note_is_said_and_converting_it_makes_it_searchable(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="utf16")
    note = home.write_memory("ps.md", "")
    note.write_bytes("# ps\n\nThe vault code is PEACH-UTF16-93.\n".encode("utf-16"))
    locked = home.write_memory("keys.md", "")  # a git-crypt note beside it, cloned without the key: never converted
    locked.write_bytes(b"\x00GITCRYPT\x00" + bytes((i * 37 + 11) % 256 for i in range(6000)))
    spec = indexed(home, testbed, OC_LATEST)
    r = probe.collect(context(home, testbed, OC_LATEST), "main", canary=spec)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "note_encoding"), (d.evidence, r.probe_errors)
    assert r.canary.outcome == "found" and UTF16 in (r.builtin.gates.note_scripts or {})
    assert [w.message.rsplit(": ", 1)[1] for w in d.warnings if w.tag == "binary_notes"] == ["memory/keys.md"]
    listed = subprocess.run(d.next_action.command, shell=True, capture_output=True, text=True, timeout=30)
    assert listed.stdout.split() == [str(note)], listed  # the UTF-16 note only: converting keys.md would destroy it

    def finds() -> bool:
        got = run_openclaw(home, OC_LATEST, "memory", "search", "PEACH-UTF16-93", "--json", "--agent", "main",
                           timeout=120, testbed=testbed)
        return got.rc == 0 and "ps.md" in got.stdout

    assert not finds()  # the truth: indexed, never found
    note.write_text(note.read_bytes().decode("utf-16"), encoding="utf-8")  # the repair's iconv
    assert run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", timeout=240, testbed=testbed).rc == 0
    assert finds()


def test_a_note_of_nul_bytes_is_not_utf16_and_search_stays_healthy(oc_home_factory, testbed, tmp_path):
    """A note that is only NUL bytes (a preallocated or sparse file, blocks a crash left zeroed) has no letters in
    either half of its bytes: it is not UTF-16 text. clawprobe said ``retrieval_failed`` · ``note_encoding`` (exit 2,
    "convert the UTF-16 notes") for a 2 GB sparse note while OpenClaw 2026.9.6 found the canary and every other
    note; now it is a ``binary_notes`` warning naming the file, and the check is healthy as the search is."""
    nul = b"\x00" * 4096
    assert decode_note(nul) == (nul.decode(), False) and decode_note(b"\x00" * 7 + b"abc")[1] is False
    agent = "ops-bot"
    home = oc_home_factory(builtin_config("none", version=OC_LATEST, agents={"list": [{"id": agent, "default": True}]}),
                           name="nul-note", agent_id=agent)
    home.write_memory_md("# Memory\n\nThe user prefers MANGO-NUL-17.\n")
    zeros = home.write_memory("scratch/zeros.md", "")
    with open(zeros, "wb") as f:
        f.truncate(32 * 1024 * 1024)  # sparse: 32 MiB of NULs
    data = tmp_path / "clawprobe-data"
    planted_and_indexed(home, testbed, data, agent=agent, version=OC_LATEST)
    got = run_openclaw(home, OC_LATEST, "memory", "search", "MANGO-NUL-17", "--json", "--agent", agent,
                       timeout=120, testbed=testbed)
    assert got.rc == 0 and "MEMORY.md" in got.stdout, got.stderr  # the truth: search works beside the NUL note
    rc, out, err = run_clawprobe(["check", "--json"], check_env(home, testbed, data, openclaw=testbed.openclaw(OC_LATEST)),
                                 timeout=300)
    (entry,) = json.loads(out)["receipts"]
    d = entry["diagnosis"]
    assert (d["verdict"], rc) == ("healthy", 0), (d["verdict"], d.get("reason"), d.get("evidence"), err)
    assert UTF16 not in (entry["receipt"]["builtin"]["gates"]["note_scripts"] or {})
    assert [w["message"].rsplit(": ", 1)[1] for w in d["warnings"] if w["tag"] == "binary_notes"] == [
        "memory/scratch/zeros.md"]
