"""Helpers for the RW tests: judge a receipt against its case row, keep the result for docs/rw-cases.md, and
probe a real test-bed home through the orchestrator (``clawprobe.core.probe``: gather → ``clawprobe.core.interpret``).

Results go to ``$CLAWPROBE_RW_RESULTS`` (default: the user cache dir ``clawprobe/rw-results``) as one JSON per
case: the receipt, the check time and which evidence it used — scripts/rw_table.py re-runs ``diagnose`` on them.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import platformdirs

from clawprobe.core import probe
from clawprobe.core.bundle import read_bundle
from clawprobe.core.canary import canary_text, new_token, sha256_text
from clawprobe.core.diagnosis import Diagnosis, diagnose
from clawprobe.core.evidence import Extra
from clawprobe.core.interpret import interpret, slow_facts
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes.models import ModelCacheEvidence
from clawprobe.core.receipt import Receipt
from clawprobe.core.runrecord import record_run
from tests.rw_cases import CASES
from tests.testbed import OC_QMD, OpenClawHome, Testbed, run_openclaw

DATA = Path(__file__).parent / "data" / "rw"
BUNDLES = Path(__file__).parent / "data" / "bundles"  # DATA's directories as support bundles (scripts/bundles_from_recorded.py)


def results_dir() -> Path:
    """Where the tests leave their receipts for scripts/rw_table.py."""
    env = os.environ.get("CLAWPROBE_RW_RESULTS")
    return Path(env) if env else Path(platformdirs.user_cache_dir("clawprobe")) / "rw-results"


def _save(case_id: str, r: Receipt, now: datetime, evidence: str) -> None:
    d = results_dir()
    d.mkdir(parents=True, exist_ok=True)
    doc = {"case": case_id, "now": now.isoformat(), "evidence": evidence, "receipt": json.loads(r.model_dump_json())}
    tmp = d / f".{case_id}.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, d / f"{case_id}.json")


def action_texts(d: Diagnosis) -> tuple[str, str, str]:
    """(everything the next action says, what it tells the operator to do, its "don't" part), lowercased."""
    a = d.next_action
    steps_all = " ".join(f"{s.title} {s.check} {s.command or ''} {s.verify}" for s in a.steps)
    todo = " ".join([a.title, a.command or ""] + [f"{s.title} {s.command or ''}" for s in a.steps])
    return (f"{a.title} {a.command or ''} {a.why} {steps_all}".lower(), todo.lower(), (a.dont or "").lower())


def check(case_id: str, r: Receipt, now: datetime | None = None, evidence: str = "") -> Diagnosis:
    """Assert the case row on ``r`` (verdict, tag, say / not_say / dont) and keep the result. Returns the
    diagnosis for the test's own, case-specific assertions."""
    c = CASES[case_id]
    at = now or r.checked_at
    d = diagnose(r, at)
    why = (f"{case_id}: got {d.verdict.value}·{d.reason}; evidence={d.evidence} probe_errors={r.probe_errors} "
           f"claims={[x.claim for x in r.status_claims]} findings={[(f.tag, f.message[:90]) for f in r.findings]}")
    assert (d.verdict.value, d.reason) == (c.verdict, c.tag), why
    says, todo, dont = action_texts(d)
    for w in c.say:
        assert w.lower() in says, f"{case_id}: next action should say {w!r}: {d.next_action.title} | {d.next_action.command}"
    for w in c.not_say:
        assert w.lower() not in todo, f"{case_id}: next action must not recommend {w!r}: {todo}"
    for w in c.dont:
        assert w.lower() in dont, f"{case_id}: the don't part should say {w!r}: {d.next_action.dont}"
    Receipt.model_validate(r.model_dump(mode="json"))  # what is kept must read back (clawprobe replay, rw_table)
    _save(case_id, r, at, evidence or c.evidence)
    return d


def bundle(case_id: str) -> Receipt:
    """The receipt of the case's support bundle (tests/data/bundles/<bundle>.json, converted from its recorded
    directory) through the live check's own interpret."""
    return interpret(read_bundle(str(BUNDLES / f"{CASES[case_id].bundle}.json")).agents[0])


def check_bundle(case_id: str) -> tuple[Receipt, Diagnosis]:
    """:func:`bundle` then :func:`check` (evidence: the bundle dir)."""
    r = bundle(case_id)
    return r, check(case_id, r, evidence=f"recorded bundle tests/data/rw/{CASES[case_id].bundle}")


# --------------------------------------------------------------------------------------------------------
# Real homes
# --------------------------------------------------------------------------------------------------------

def plant(home: OpenClawHome, rel: str = "memory/clawprobe-canary.md", token: str | None = None,
          at: datetime | None = None) -> probe.CanarySpec:
    """Write a clawprobe canary file at ``rel`` in the home's workspace (no record in clawprobe's data dir:
    the spec is handed to the probe directly)."""
    tok = token or new_token()
    text = canary_text(tok)
    home.write_file(rel, text)
    return probe.CanarySpec(token=tok, expected_path=rel, content_sha256=sha256_text(text),
                            planted_at=at or datetime.now(UTC))


def context(home: OpenClawHome, tb: Testbed, version: str = OC_QMD, path_dirs=(), extra=None) -> probe.ProbeContext:
    """``clawprobe.core.probe.discover`` for this home, as clawprobe would run from a shell whose PATH is ``path_dirs``
    (the OpenClaw CLI pinned with ``$CLAWPROBE_OPENCLAW``)."""
    probe.clear_caches()
    env = home.env(path_dirs, {"CLAWPROBE_OPENCLAW": str(tb.openclaw(version)), **(extra or {})})
    return probe.discover(env=env)


def indexed(home: OpenClawHome, tb: Testbed, version: str, path_dirs=()) -> probe.CanarySpec:
    """A ``MEMORY.md`` and a planted canary in ``home``, indexed by the real ``openclaw memory index`` of
    ``version`` (asserted to succeed): the healthy state a fault is then made in. Returns the canary."""
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    spec = plant(home)
    made = run_openclaw(home, version, "memory", "index", "--agent", "main", path_dirs=path_dirs, timeout=240,
                        testbed=tb)
    assert made.rc == 0, made.stderr
    return spec


def search_only(ctx: probe.ProbeContext, agent_id: str, spec: probe.CanarySpec, now: datetime) -> probe.SlowEvidence:
    """The canary retrieval alone (``openclaw memory search TOKEN --json``), without ``memory status`` — for
    states where status adds nothing (it costs another 3–6 s of CPU)."""
    env = probe._cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path)
    run = record_run(oc.run_search(ctx.openclaw, spec.token, agent_id, env, cwd=env.get("HOME")), keep=(spec.token,))
    # the parsed facts filled too (tests read them); interpret re-derives them from the run record
    return slow_facts(probe.SlowEvidence(taken_at=now, agent_id=agent_id, canary=spec, search_run=run), qmd=True)


def live(ctx: probe.ProbeContext, agent_id: str, slow_ev: probe.SlowEvidence | None, now: datetime | None = None,
         extra: Extra | None = None, model_cache: ModelCacheEvidence | None = None) -> Receipt:
    """``clawprobe.core.probe.gather`` with ``slow_ev``, then ``clawprobe.core.interpret.interpret`` — for a
    real+recorded case with the recorded pieces (the fields set in ``extra``, a recorded ``model_cache``) put
    into the gathered evidence first."""
    at = now or datetime.now(UTC)
    ev = probe.gather(ctx, agent_id, slow_ev, at)
    if extra is not None:
        ev.extra = ev.extra.model_copy(update={k: getattr(extra, k) for k in extra.model_fields_set if k != "tree"})
    if model_cache is not None:  # the recorded host's model cache stands for this host's, every role included
        ev.model_cache, ev.model_cache_all = model_cache, None
    return interpret(ev)


def after_lease(r: Receipt, seconds: float = 1.0) -> datetime:
    """A check time just past the receipt's freshness lease (instead of sleeping)."""
    base = r.freshness.last_proven_current or r.checked_at
    return base + timedelta(seconds=r.lease.seconds + seconds)
