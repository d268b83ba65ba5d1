"""contrib/prometheus/clawprobe-rules.yml on the real promtool: ``check rules`` and ``test rules`` unit tests
whose input series are textfiles written by clawprobe itself (``clawprobe replay SCENARIO --textfile`` on the
embedded demo scenarios, one per verdict, and ``clawprobe check --textfile`` for a check that cannot run).

Series timing: each textfile is "scraped" every minute and rewritten every 5 minutes (the timer's interval);
the two ``*_timestamp_seconds`` values are re-based to promtool's clock (0 = the test's start), everything
else is what clawprobe wrote. promtool comes from scripts/install-promstack.sh: without it these tests FAIL.
Also the Alertmanager route example on the real amtool (``check-config``, ``config routes test``).
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from clawprobe.cli.main import main
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts
from clawprobe.core.verdicts import Verdict, exit_code

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "contrib" / "prometheus" / "clawprobe-rules.yml"
ROUTE = ROOT / "contrib" / "alertmanager" / "route.yml"
SCENARIOS = sorted((ROOT / "src" / "clawprobe" / "tui" / "demo" / "scenarios").glob("*.json"))
TIMESTAMPS = ("clawprobe_last_run_timestamp_seconds", "clawprobe_checked_timestamp_seconds")
RUN_EVERY_MIN = 5
GEN = runpy.run_path(str(ROOT / "scripts" / "make-contrib-rules.py"))


def tool(name: str) -> str:
    """The real program, or a FAILED test naming the installer (never a skip)."""
    path = shutil.which(name)
    assert path, f"{name} is not installed: run scripts/install-promstack.sh (scripts/test.sh does)"
    return path


def _quiet_main(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def replay_textfile(tmp: Path, scenario: Path, *extra: str) -> str:
    """What ``clawprobe replay SCENARIO --textfile F`` writes."""
    out = tmp / f"{scenario.stem}.prom"
    rc = _quiet_main(["replay", str(scenario), *extra, "--textfile", str(out)])
    assert rc in (0, 1, 2, 3) and out.is_file()
    return out.read_text()


def _series_key(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if v != "")
    return f"{name}{{{inner}}}"


def input_series(host: str, minutes: int, text: str, *, rewritten: bool = True) -> list[dict]:
    """promtool ``input_series`` for one host exporting ``text`` for ``minutes`` (plus node_exporter's
    ``up``). ``rewritten``: the file is rewritten every 5 minutes (its timestamps advance); else it was
    written once at 0 and left (a stopped timer)."""
    values: dict[str, list[str]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            key = _series_key(s.name, {**s.labels, "instance": host, "job": "node"})
            row = []
            for m in range(minutes + 1):
                written = 60 * RUN_EVERY_MIN * (m // RUN_EVERY_MIN) if rewritten else 0
                row.append(repr(float(written if s.name in TIMESTAMPS else s.value)))
            values[key] = row
    values[_series_key("up", {"instance": host, "job": "node"})] = ["1"] * (minutes + 1)
    return [{"series": k, "values": " ".join(v)} for k, v in values.items()]


def _rule(name: str) -> dict:
    doc = yaml.safe_load(RULES.read_text())
    return next(r for g in doc["groups"] for r in g["rules"] if r.get("alert") == name)


def expand(template: str, labels: dict[str, str]) -> str:
    """The two template forms the rule file uses: ``{{ $labels.x }}`` and ``{{ if $labels.x }}…{{ end }}``."""
    t = re.sub(r"\{\{ if \$labels\.(\w+) \}\}(.*?)\{\{ end \}\}", lambda m: m[2] if labels.get(m[1]) else "", template)
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m[1], ""), t)


def expected(alert: str, series_labels: dict[str, str]) -> dict:
    """The alert promtool must report for a series with ``series_labels``: those + the rule's labels,
    and the rule's annotations expanded with them."""
    rule = _rule(alert)
    labels = {k: v for k, v in {**series_labels, **rule["labels"]}.items() if v != ""}
    return {"exp_labels": labels, "exp_annotations": {k: expand(v, labels) for k, v in rule["annotations"].items()}}


def minutes(duration: str) -> int:
    assert duration.endswith("m"), duration
    return int(duration[:-1])


def promtool_test(tmp: Path, tests: list[dict]) -> subprocess.CompletedProcess:
    doc = {"rule_files": [str(RULES)], "evaluation_interval": "1m", "tests": tests}
    f = tmp / "clawprobe-rules-test.yml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False, width=400))
    return subprocess.run([tool("promtool"), "test", "rules", str(f)], capture_output=True, text=True, timeout=120)


# --------------------------------------------------------------------------------------------------------

def test_the_rule_file_is_generated_from_the_current_tables():
    assert GEN["main"](["--check"]) == 0, "contrib/prometheus/clawprobe-rules.yml is stale: python scripts/make-contrib-rules.py"


def test_promtool_check_rules():
    p = subprocess.run([tool("promtool"), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    n = sum(len(g["rules"]) for g in yaml.safe_load(RULES.read_text())["groups"])
    assert p.returncode == 0 and f"SUCCESS: {n} rules found" in p.stdout, p.stdout + p.stderr


def test_every_non_healthy_verdict_has_an_alert_with_its_exit_class():
    for v in Verdict:
        rules = [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]
                 if r.get("expr") == f'clawprobe_verdict{{verdict="{v.value}"}} == 1']
        assert len(rules) == (0 if v is Verdict.HEALTHY else 1), v
        if rules:
            assert rules[0]["labels"]["exit_code"] == str(exit_code(v))
            assert rules[0]["labels"]["severity"] == {2: "critical", 1: "warning", 3: "warning"}[exit_code(v)]


def test_each_verdict_alert_fires_for_exactly_the_hosts_with_that_verdict(tmp_path):
    """18 hosts, one demo scenario each (every verdict, two agents on one host): each verdict alert fires,
    after its ``for:`` and not before, for exactly the agents clawprobe gave that verdict, with the verdict,
    tag and next action in its annotations."""
    hold = 40
    series: list[dict] = []
    by_verdict: dict[str, list[dict[str, str]]] = {}
    for i, sc in enumerate(SCENARIOS, 1):
        host = f"host{i:02d}"
        text = replay_textfile(tmp_path, sc)
        series += input_series(host, hold, text)
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                if s.name == "clawprobe_verdict" and s.value == 1:
                    by_verdict.setdefault(s.labels["verdict"], []).append({**s.labels, "instance": host, "job": "node"})
    assert set(by_verdict) == {v.value for v in Verdict}  # the scenarios cover every verdict
    cases = []
    for v in Verdict:
        if v is Verdict.HEALTHY:
            continue
        alert = f"Clawprobe{''.join(p.capitalize() for p in v.value.split('_'))}"
        wait = minutes(_rule(alert)["for"])
        cases.append({"eval_time": f"{wait - 1}m", "alertname": alert, "exp_alerts": []})
        cases.append({"eval_time": f"{hold}m", "alertname": alert,
                      "exp_alerts": [expected(alert, lab) for lab in by_verdict[v.value]]})
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS" in p.stdout


def test_clawprobe_down_fires_when_the_check_could_not_run(tmp_path):
    """``clawprobe check --textfile`` pointed at a state dir that does not exist: clawprobe_up 0 → ClawprobeDown
    after 10 minutes; a healthy host beside it stays quiet."""
    prom = tmp_path / "down.prom"
    assert _quiet_main(["check", "--state-dir", str(tmp_path / "nowhere"), "--textfile", str(prom)]) == 3
    healthy = replay_textfile(tmp_path, SCENARIOS[0])
    series = input_series("down1", 20, prom.read_text()) + input_series("ok1", 20, healthy)
    cases = [{"eval_time": "9m", "alertname": "ClawprobeDown", "exp_alerts": []},
             {"eval_time": "15m", "alertname": "ClawprobeDown",
              "exp_alerts": [expected("ClawprobeDown", {"instance": "down1", "job": "node"})]}]
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_textfile_that_is_no_longer_rewritten_is_stale(tmp_path):
    text = replay_textfile(tmp_path, SCENARIOS[0])
    series = input_series("stopped", 30, text, rewritten=False) + input_series("running", 30, text)
    cases = [{"eval_time": "14m", "alertname": "ClawprobeTextfileStale", "exp_alerts": []},
             {"eval_time": "25m", "alertname": "ClawprobeTextfileStale",
              "exp_alerts": [expected("ClawprobeTextfileStale", {"instance": "stopped", "job": "node"})]}]
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr


def test_absent_metrics_fire_both_globally_and_per_host(tmp_path):
    series = [{"series": 'up{instance="bare",job="node"}', "values": " ".join(["1"] * 21)}]
    cases = [{"eval_time": "20m", "alertname": "ClawprobeMetricsAbsent", "exp_alerts": [expected("ClawprobeMetricsAbsent", {})]},
             {"eval_time": "20m", "alertname": "ClawprobeMetricsMissingOnHost",
              "exp_alerts": [expected("ClawprobeMetricsMissingOnHost", {"instance": "bare", "job": "node"})]}]
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr
    text = replay_textfile(tmp_path, SCENARIOS[0])  # with clawprobe's file on the host: neither fires
    cases = [{"eval_time": "20m", "alertname": a, "exp_alerts": []} for a in ("ClawprobeMetricsAbsent",
                                                                          "ClawprobeMetricsMissingOnHost")]
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": input_series("h", 20, text), "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr


def test_lease_ending_fires_when_the_update_is_overdue(tmp_path):
    """The healthy scenario judged 60 s before its lease ends (``replay --now``) vs at its check time."""
    sc = SCENARIOS[0]
    (r,) = load_receipts(sc)
    d = diagnose(r)
    assert d.verdict is Verdict.HEALTHY and d.lease_seconds_left is not None and d.lease_seconds_left >= 120
    late = d.expires_at - timedelta(seconds=60)
    assert diagnose(r, late).verdict is Verdict.HEALTHY
    overdue = replay_textfile(tmp_path, sc, "--now", late.isoformat())
    fresh = replay_textfile(tmp_path, sc)
    series = input_series("overdue", 10, overdue) + input_series("fresh", 10, fresh)
    agent = {"agent": r.agent_id, "job": "node"}
    cases = [{"eval_time": "5m", "alertname": "ClawprobeLeaseEnding",
              "exp_alerts": [expected("ClawprobeLeaseEnding", {**agent, "instance": "overdue"})]}]
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr


def _scenario(name: str) -> Path:
    return next(s for s in SCENARIOS if name in s.name)


def test_pending_embeddings_that_do_not_drain_fire_after_an_hour_and_a_half(tmp_path):
    pending = replay_textfile(tmp_path, _scenario("query-14-pending"))
    assert 'clawprobe_pending_embeddings{agent="main"} 14.0' in pending
    drained = replay_textfile(tmp_path, _scenario("index-bloat"))  # healthy, nothing pending
    assert 'clawprobe_pending_embeddings{agent="main"} 0.0' in drained
    series = input_series("stuck", 100, pending) + input_series("ok", 100, drained)
    lab = {"agent": "main", "instance": "stuck", "job": "node"}
    cases = [{"eval_time": "80m", "alertname": "ClawprobePendingEmbeddingsNotDraining", "exp_alerts": []},
             {"eval_time": "95m", "alertname": "ClawprobePendingEmbeddingsNotDraining",
              "exp_alerts": [expected("ClawprobePendingEmbeddingsNotDraining", lab)]}]
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_canary_missed_in_six_runs_in_a_row_fires(tmp_path):
    miss = replay_textfile(tmp_path, _scenario("vsearch-no-canary"))
    assert 'clawprobe_canary_found{agent="main"} 0.0' in miss
    found = replay_textfile(tmp_path, SCENARIOS[0])
    assert 'clawprobe_canary_found{agent="main"} 1.0' in found
    series = input_series("missing", 40, miss) + input_series("found", 40, found)
    lab = {"agent": "main", "instance": "missing", "job": "node"}
    cases = [{"eval_time": "24m", "alertname": "ClawprobeCanaryNotRetrieved", "exp_alerts": []},
             {"eval_time": "30m", "alertname": "ClawprobeCanaryNotRetrieved",
              "exp_alerts": [expected("ClawprobeCanaryNotRetrieved", lab)]}]
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": cases}])
    assert p.returncode == 0, p.stdout + p.stderr


# --------------------------------------------------------------------------------------------------------
# Alertmanager route example

def test_alertmanager_route_example_is_valid_and_groups_by_host_and_verdict():
    amtool = tool("amtool")
    p = subprocess.run([amtool, "check-config", str(ROUTE)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "SUCCESS" in p.stdout, p.stdout + p.stderr
    route = yaml.safe_load(ROUTE.read_text())["route"]["routes"][0]
    assert route["group_by"] == ["instance", "verdict"]

    def receiver(*labels: str) -> str:
        q = subprocess.run([amtool, "config", "routes", "test", f"--config.file={ROUTE}", *labels],
                           capture_output=True, text=True, timeout=60)
        assert q.returncode == 0, q.stdout + q.stderr
        return q.stdout.strip()

    assert receiver("alertname=ClawprobeFallbackActive", "severity=critical", "instance=h1") == "ops-pager"
    assert receiver("alertname=ClawprobeStaleIndex", "severity=warning", "instance=h1") == "ops-chat"


@pytest.mark.parametrize("sc", SCENARIOS[:1])
def test_promtool_check_metrics_accepts_the_replay_textfile(tmp_path, sc):
    p = subprocess.run([tool("promtool"), "check", "metrics"], input=replay_textfile(tmp_path, sc),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stdout + p.stderr


def test_coverage_ratio_is_recorded_per_agent_and_source(tmp_path):
    """``clawprobe:coverage_indexed:ratio`` from a textfile clawprobe wrote for a receipt with coverage rows (38 of
    41 memory files indexed; session transcripts 9 of 12; a source with nothing on disk gives no series)."""
    from clawprobe.core.receipt import Coverage, SourceCoverage

    (r,) = load_receipts(SCENARIOS[0])
    r = r.model_copy(deep=True)
    r.coverage = Coverage(measured="before_probe", sources=[
        SourceCoverage(source="memory/", measured_by="disk_scan", expected=41, indexed=38, missing=3),
        SourceCoverage(source="sessions", measured_by="status", expected=12, indexed=9, missing=3)])
    (tmp_path / "cov.json").write_text(r.model_dump_json())
    text = replay_textfile(tmp_path, tmp_path / "cov.json")
    empty = r.model_copy(deep=True)
    empty.coverage = Coverage(sources=[SourceCoverage(source="memory/", measured_by="disk_scan", expected=0, indexed=0)])
    (tmp_path / "empty.json").write_text(empty.model_dump_json())
    series = input_series("h1", 10, text) + input_series("h2", 10, replay_textfile(tmp_path, tmp_path / "empty.json"))
    lab = {"agent": r.agent_id, "instance": "h1", "job": "node"}
    exp = [{"labels": f'clawprobe:coverage_indexed:ratio{{{_series_key("", {**lab, "source": s})[1:-1]}}}', "value": v}
           for s, v in (("memory", 38 / 41), ("sessions", 9 / 12))]
    case = {"eval_time": "5m", "expr": "clawprobe:coverage_indexed:ratio", "exp_samples": exp}
    p = promtool_test(tmp_path, [{"interval": "1m", "input_series": series, "promql_expr_test": [case]}])
    assert p.returncode == 0, p.stdout + p.stderr
