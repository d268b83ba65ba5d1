#!/usr/bin/env python3
"""Record what the real OpenClaw/qmd programs print for the reference scenarios.

Writes tests/data/recorded/<scenario>/config.json and, per command, <scenario>/<step>/
{stdout.json|stdout.txt, stderr.txt, log.jsonl, meta.json}. Absolute temp paths become ``<home>``, the test
bed root becomes ``<testbed>``. Needs the test bed (scripts/install-testbed.sh).

    python scripts/record-scenarios.py [scenario ...]     # default: all
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.testbed import (  # noqa: E402
    OC_LATEST,
    OC_QMD,
    OpenClawHome,
    Testbed,
    builtin_config,
    openclaw_env,
    qmd_config,
    run_openclaw,
)

OUT = REPO / "tests" / "data" / "recorded"
TOKEN = "QMDCANARY-9876-LOTUS"


class Recorder:
    def __init__(self, name: str, tb: Testbed):
        self.name, self.tb = name, tb
        self.home = OpenClawHome.create(prefix=f"clawprobe-rec-{name}-")
        self.dir = OUT / name
        self.dir.mkdir(parents=True, exist_ok=True)

    def red(self, text: str) -> str:
        return self.home.redact(text).replace(str(self.tb.root), "<testbed>")

    def config(self, cfg) -> None:
        self.home.write_config(cfg)
        (self.dir / "config.json").write_text(self.red(self.home.config_path.read_text()))

    def run(self, step: str, version: str, *args: str, qmd_on_path: bool = True, timeout: float = 90):
        n_before = len(self.home.log_lines())
        path_dirs = [self.tb.bin_dir] if qmd_on_path else []
        res = run_openclaw(self.home, version, *args, path_dirs=path_dirs, timeout=timeout, testbed=self.tb)
        d = self.dir / step
        d.mkdir(parents=True, exist_ok=True)
        for old in d.iterdir():
            old.unlink()
        out = self.red(res.stdout)
        try:
            json.loads(out)
            (d / "stdout.json").write_text(out)
        except json.JSONDecodeError:
            (d / "stdout.txt").write_text(out)
        (d / "stderr.txt").write_text(self.red(res.stderr))
        new_lines = self.home.log_lines()[n_before:]
        (d / "log.jsonl").write_text("".join(self.red(json.dumps(r, ensure_ascii=False)) + "\n" for r in new_lines))
        meta = {
            "scenario": self.name, "step": step, "version": version,
            "command": [f"openclaw-{version}", *args],
            "path": ["<testbed>/bin", "/usr/bin", "/bin"] if qmd_on_path else ["/usr/bin", "/bin"],
            "env": sorted(openclaw_env(self.home, version, path_dirs, testbed=self.tb)),
            "rc": res.rc, "seconds": res.seconds,
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "state_files": sorted(f"<home>/{p.relative_to(self.home.root)}" for p in self.home.root.rglob("*")
                                  if (p.is_file() or p.is_symlink()) and "node-compile-cache" not in str(p)),
        }
        (d / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
        print(f"  {self.name}/{step}: rc={res.rc} {res.seconds}s stderr={res.stderr.strip()[:160]!r}")
        return res

    def canary(self) -> None:
        self.home.write_memory_md("# Memory\n\nThe user prefers tea over coffee.\n")
        self.home.write_canary(TOKEN)


def s_builtin_none(tb):
    r = Recorder("735-builtin-none", tb)
    r.config(builtin_config("none"))
    r.canary()
    r.run("index", OC_QMD, "memory", "index")
    r.run("status", OC_QMD, "memory", "status", "--json")
    r.run("search", OC_QMD, "memory", "search", TOKEN, "--json")


def s_qmd_path_search(tb):
    r = Recorder("735-qmd-path-search", tb)
    r.config(qmd_config("qmd", "search"))
    r.canary()
    r.run("index", OC_QMD, "memory", "index")
    r.run("status", OC_QMD, "memory", "status", "--json")
    r.run("search", OC_QMD, "memory", "search", TOKEN, "--json")


def s_qmd_not_on_path(tb):
    r = Recorder("735-qmd-not-on-path", tb)
    r.config(qmd_config("qmd", "search"))
    r.canary()
    r.run("status", OC_QMD, "memory", "status", "--json", qmd_on_path=False)
    r.run("search", OC_QMD, "memory", "search", TOKEN, "--json", qmd_on_path=False)


def s_qmd_absolute(tb):
    r = Recorder("735-qmd-absolute-command", tb)
    r.config(qmd_config(str(tb.qmd), "search"))
    r.canary()
    r.run("index", OC_QMD, "memory", "index", qmd_on_path=False)
    r.run("search", OC_QMD, "memory", "search", TOKEN, "--json", qmd_on_path=False)


def s_qmd_nonexistent(tb):
    r = Recorder("735-qmd-nonexistent-command", tb)
    r.config(qmd_config("/nonexistent/bin/qmd", "search"))
    r.canary()
    r.run("status", OC_QMD, "memory", "status", "--json")


def s_qmd_node20(tb):
    r = Recorder("735-qmd-node20-command", tb)
    r.config(qmd_config(str(tb.qmd_node20), "search"))
    r.canary()
    r.run("index", OC_QMD, "memory", "index", qmd_on_path=False)
    r.run("search", OC_QMD, "memory", "search", TOKEN, "--json", qmd_on_path=False)


def s_scope_deny(tb):
    r = Recorder("735-qmd-scope-deny", tb)
    r.config(qmd_config("qmd", "search", qmd={"scope": {"default": "deny", "rules": []}}))
    r.canary()
    r.run("index", OC_QMD, "memory", "index")
    r.run("search", OC_QMD, "memory", "search", TOKEN, "--json")


def s_96_qmd_keys(tb):
    r = Recorder("96-qmd-keys-rejected", tb)
    r.config(qmd_config("qmd", "search"))
    r.canary()
    r.run("status", OC_LATEST, "memory", "status", "--json")


def s_96_provider_unset(tb):
    r = Recorder("96-provider-unset", tb)
    r.config(builtin_config(None, version=OC_LATEST))
    r.canary()
    r.run("index", OC_LATEST, "memory", "index")
    r.run("status", OC_LATEST, "memory", "status", "--json")
    r.run("search", OC_LATEST, "memory", "search", TOKEN, "--json")


def s_96_provider_openai(tb):
    r = Recorder("96-provider-openai", tb)
    r.config(builtin_config("openai", version=OC_LATEST))
    r.canary()
    r.run("index", OC_LATEST, "memory", "index")
    r.run("search", OC_LATEST, "memory", "search", TOKEN, "--json")


SCENARIOS = {f.__name__[2:]: f for f in (
    s_builtin_none, s_qmd_path_search, s_qmd_not_on_path, s_qmd_absolute, s_qmd_nonexistent, s_qmd_node20,
    s_scope_deny, s_96_qmd_keys, s_96_provider_unset, s_96_provider_openai)}


def main(argv: list[str]) -> int:
    tb = Testbed.locate()
    if tb.missing():
        print(f"test bed missing: {tb.missing()}; run scripts/install-testbed.sh", file=sys.stderr)
        return 2
    names = argv or list(SCENARIOS)
    for n in names:
        print(n)
        SCENARIOS[n](tb)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
