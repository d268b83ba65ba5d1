#!/usr/bin/env python3
"""Writes contrib/prometheus/clawprobe-rules.yml from clawprobe's own tables (verdicts, exit codes, repairs).

The rule file is generated so that the verdict list, the severity of each exit class and the next action
are decided once, in ``clawprobe.core`` (tests/test_fleet_rules.py checks the committed file is current).
Usage: python scripts/make-contrib-rules.py [--check]   (--check: exit 1 when the file differs)
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from clawprobe.core.repairs import lookup
from clawprobe.core.verdicts import TITLES, Verdict, exit_code

OUT = Path(__file__).resolve().parent.parent / "contrib" / "prometheus" / "clawprobe-rules.yml"

#: exit code → (severity, exit_class, for:) — a failure pages after two runs of a 5-minute timer, a warning
#: or an unproven state after half an hour (a warm-up or an update cycle clears by itself)
EXIT_CLASSES = {2: ("critical", "failure", "10m"), 1: ("warning", "warning", "30m"), 3: ("warning", "unverified", "30m")}
RUN_INTERVAL = "5m"  # the timer/cron interval the durations below assume (contrib/systemd, contrib/cron)
STALE_AFTER_S = 900  # three missed runs
#: a lease with less than this left at the check: no update in the last interval (lease = interval +
#: update duration + margin = 300 + 60 + 60 by default), so the index turns stale before the next run
LEASE_ENDING_S = 120
WALK = "clawprobe walk --agent {{ $labels.agent }} (on {{ $labels.instance }})"


def _camel(v: Verdict) -> str:
    return "".join(p.capitalize() for p in v.value.split("_"))


def verdict_alert(v: Verdict) -> dict:
    """One alert per non-healthy verdict; labels and annotations from the exit class and the repair table."""
    severity, cls, hold = EXIT_CLASSES[exit_code(v)]
    return {
        "alert": f"Clawprobe{_camel(v)}",
        "expr": f'clawprobe_verdict{{verdict="{v.value}"}} == 1',
        "for": hold,
        "labels": {"severity": severity, "exit_class": cls, "exit_code": str(exit_code(v))},
        "annotations": {
            "summary": f"{{{{ $labels.agent }}}} on {{{{ $labels.instance }}}}: {TITLES[v]}"
                       " ({{ $labels.verdict }}{{ if $labels.tag }} · {{ $labels.tag }}{{ end }})",
            "verdict": "{{ $labels.verdict }}",
            "tag": "{{ $labels.tag }}",
            "next_action": f"{lookup(v, None).title}. Steps for this tag: {WALK}",
        },
    }


def rules() -> dict:
    """The whole rule file as a YAML-ready mapping."""
    fleet = [
        {"alert": "ClawprobeDown", "expr": "clawprobe_up == 0", "for": "10m",
         "labels": {"severity": "critical", "exit_class": "unverified", "exit_code": "3"},
         "annotations": {"summary": "{{ $labels.instance }}: clawprobe proved nothing (clawprobe_up 0)",
                         "verdict": "none proven", "tag": "see the '# clawprobe:' line of the textfile",
                         "next_action": "Read the '# clawprobe:' lines in the textfile on {{ $labels.instance }} "
                                        "(OpenClaw missing or failing, a probe that could not run, the check "
                                        "itself could not run), fix that, then run clawprobe check there"}},
        {"alert": "ClawprobeTextfileStale", "expr": f"clawprobe:textfile_age_seconds > {STALE_AFTER_S}", "for": "5m",
         "labels": {"severity": "warning", "exit_class": "unverified", "exit_code": "3"},
         "annotations": {"summary": "{{ $labels.instance }}: the clawprobe textfile was not rewritten for more than 15 minutes",
                         "verdict": "stale metrics", "tag": "textfile_stale",
                         "next_action": "The timer or cron job stopped: systemctl status clawprobe-check.timer "
                                        "(or journalctl -u clawprobe-check) on {{ $labels.instance }}"}},
        {"alert": "ClawprobeMetricsAbsent", "expr": "absent(clawprobe_up)", "for": "15m",
         "labels": {"severity": "warning", "exit_class": "unverified", "exit_code": "3"},
         "annotations": {"summary": "no host exports clawprobe_up", "verdict": "no metrics", "tag": "absent",
                         "next_action": "Install the timer (contrib/systemd) and point node_exporter's "
                                        "--collector.textfile.directory at the textfile's directory"}},
        {"alert": "ClawprobeMetricsMissingOnHost", "expr": 'up{job="node"} == 1 unless on (instance) clawprobe_up',
         "for": "15m", "labels": {"severity": "warning", "exit_class": "unverified", "exit_code": "3"},
         "annotations": {"summary": "{{ $labels.instance }}: node_exporter is up but exports no clawprobe metrics",
                         "verdict": "no metrics", "tag": "absent_on_host",
                         "next_action": "Check that the textfile exists in node_exporter's textfile directory on "
                                        "{{ $labels.instance }} and is readable by node_exporter (mode 0644)"}},
        {"alert": "ClawprobeLeaseEnding",
         "expr": f"clawprobe_lease_seconds_left > 0 and clawprobe_lease_seconds_left < {LEASE_ENDING_S}", "for": "0m",
         "labels": {"severity": "warning", "exit_class": "warning", "exit_code": "1"},
         "annotations": {"summary": "{{ $labels.agent }} on {{ $labels.instance }}: the index update is overdue; "
                                    f"the freshness lease had less than {LEASE_ENDING_S} s left at the check",
                         "verdict": "stale_index (soon)", "tag": "lease",
                         "next_action": f"{lookup(Verdict.STALE_INDEX, None).title}. Steps: {WALK}"}},
        {"alert": "ClawprobePendingEmbeddingsNotDraining",
         "expr": "clawprobe_pending_embeddings > 0 and clawprobe_pending_embeddings >= "
                 "(clawprobe_pending_embeddings offset 1h)", "for": "30m",
         "labels": {"severity": "warning", "exit_class": "warning", "exit_code": "1"},
         "annotations": {"summary": "{{ $labels.agent }} on {{ $labels.instance }}: documents pending embedding, "
                                    "not fewer than an hour ago",
                         "verdict": "vector_not_ready", "tag": "pending",
                         "next_action": f"{lookup(Verdict.VECTOR_NOT_READY, None).title}. Steps: {WALK}"}},
        {"alert": "ClawprobeCanaryNotRetrieved", "expr": "clawprobe_canary_found == 0",
         "for": "25m", "labels": {"severity": "critical", "exit_class": "failure", "exit_code": "2"},
         "annotations": {"summary": "{{ $labels.agent }} on {{ $labels.instance }}: the canary was not retrieved "
                                    "from its expected source in 6 runs in a row (25 minutes)",
                         "verdict": "retrieval_failed", "tag": "canary",
                         "next_action": f"{lookup(Verdict.RETRIEVAL_FAILED, None).title}. Steps: {WALK}"}},
    ]
    recording = [
        {"record": "clawprobe:textfile_age_seconds", "expr": "time() - clawprobe_last_run_timestamp_seconds"},
        {"record": "clawprobe:verdict:current", "expr": "clawprobe_verdict == 1"},
        {"record": "clawprobe:agents_failing:count", "expr": "count by (instance) (clawprobe_exit_code == 2)"},
        # share of the files on disk that the engine's rules index which the index reflects (no series for a
        # source with nothing on disk, or not compared with an index)
        {"record": "clawprobe:coverage_indexed:ratio",
         "expr": "clawprobe_coverage_indexed_files / (clawprobe_coverage_expected_files > 0)"},
    ]
    verdicts = [verdict_alert(v) for v in Verdict if v is not Verdict.HEALTHY]
    return {"groups": [
        {"name": "clawprobe.recording", "interval": "1m", "rules": recording},
        {"name": "clawprobe.fleet", "rules": fleet},
        {"name": "clawprobe.verdicts", "rules": verdicts},
    ]}


HEADER = """\
# Prometheus rules for clawprobe's node_exporter textfile (clawprobe check --textfile, every 5 minutes).
# GENERATED by scripts/make-contrib-rules.py from clawprobe's verdict, exit-code and repair tables: edit that.
# Severity follows the exit class: failure (exit 2) → critical after 10m; warning (exit 1) and unverified
# (exit 3) → warning after 30m. Annotations carry the verdict, its tag and the next action.
# ClawprobeMetricsMissingOnHost assumes node_exporter is scraped as job="node": change it to your job name.
# Tested with promtool check rules / promtool test rules (tests/test_fleet_rules.py).
"""


def text() -> str:
    """The file's text."""
    return HEADER + yaml.safe_dump(rules(), sort_keys=False, width=200, allow_unicode=True)


def main(argv: list[str]) -> int:
    """Write (or ``--check``) the rule file."""
    new = text()
    if "--check" in argv:
        return 0 if OUT.exists() and OUT.read_text() == new else 1
    OUT.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
