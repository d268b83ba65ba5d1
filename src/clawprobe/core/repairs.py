"""The repair catalog: for each verdict (and sub-reason) one next action and an ordered walkthrough.

Principles (spec §6): one narrow next action per verdict; rebuilding every index is never the default
(it destroys the evidence that tells a path fault from a freshness fault); never disable the fallback to
make a checker red; never run ``qmd`` by hand with arbitrary XDG dirs. Commands are templates filled for
the agent and install at hand by :func:`repair_for` (``{agent}``, ``{openclaw}``, ``{qmd}``,
``{config}``, ``{state}``, ``{agent_xdg}``…; see :func:`_context`) with the real values the receipt holds —
paths shell-quoted (``shlex.quote``; a leading ``~/`` stays unquoted so the shell expands it), the canary
token read from the canary file at run time (the receipt keeps only its hash). A command needing a value
the receipt does not hold is **not offered**: ``command`` becomes ``None`` and the text says what to fill
in (no ``<placeholder>`` ever reaches a command: pasted into a shell, ``<canary`` is a redirection).
Variants: an entry keyed ``reason/qmd`` or ``reason/builtin`` wins for that engine, ``reason/search`` /
``reason/vsearch`` / ``reason/query`` for that QMD search mode (mode first).
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Literal, overload

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.canary import TOKEN_PREFIX
from clawprobe.core.modes import MODELS_NEEDED
from clawprobe.core.receipt import LockHolder, Receipt, SearchMode, SidecarHolder
from clawprobe.core.verdicts import Verdict


class RepairStep(BaseModel):
    """One walkthrough step: what to check, the command (if any), and the condition that proves it worked.

    ``runnable`` marks OpenClaw's own managed, non-destructive commands that clawprobe may run itself
    after the operator confirms; everything else is shown to copy, never run.
    """

    model_config = ConfigDict(extra="forbid")
    title: str
    check: str
    command: str | None = None
    verify: str
    runnable: bool = False


class RepairAction(BaseModel):
    """The next action for a verdict: one line, the command, why, what not to do, and the steps."""

    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    reason: str | None = None
    title: str
    command: str | None = None
    why: str
    dont: str | None = None
    steps: list[RepairStep] = Field(default_factory=list)


S = RepairStep
_REPROBE = S(title="Re-probe", check="Run clawprobe again (r in the dashboard).", command="clawprobe check --agent {agent}",
             verify="The verdict moves past this state.")
_INDEX = S(title="Run the managed update", check="OpenClaw updates its own per-agent index (never hand-made XDG dirs).",
           command="{openclaw} memory index --agent {agent}", verify="A new update time within the lease; unindexed files now indexed.",
           runnable=True)

# (verdict, reason or None) -> (title, command, why, dont, steps)
_CATALOG: dict[tuple[Verdict, str | None], RepairAction] = {}


def _add(verdict: Verdict, reason: str | None, title: str, command: str | None, why: str,
         dont: str | None, steps: list[RepairStep]) -> None:
    _CATALOG[(verdict, reason)] = RepairAction(verdict=verdict, reason=reason, title=title, command=command,
                                               why=why, dont=dont, steps=steps)


_add(Verdict.CONFIG_INVALID, None, "Fix the config at the reported line/key, then re-probe",
     "{openclaw} config validate --json",
     "OpenClaw refuses to start or run any memory command while the config does not load.",
     "Don't let any tool rewrite or 'normalise' the file, and don't trust memory probes until it loads.",
     [S(title="Open the file at the reported position", check="Line/column or key path shown in the evidence.",
        verify="The construct is fixed (escape raw newlines, fix the enum value, restore the $include target)."),
      S(title="Validate", check="OpenClaw's own validator agrees.", command="{openclaw} config validate --json",
        verify='"valid": true', runnable=True), _REPROBE])
_add(Verdict.CONFIG_INVALID, "schema", "Fix the rejected key — an allowed value, or remove/move a key OpenClaw does not "
     "know (or run openclaw doctor --fix)",
     "{openclaw} doctor", "OpenClaw's schema rejects a key or value the config holds; every memory command exits 1.",
     "Don't run or trust memory probes until the config loads (for memory.backend: a memory plugin is chosen with "
     "plugins.slots.memory, not this key).",
     [S(title="Fix the key", check="Key path, allowed values and where a misplaced key belongs are in the evidence.",
        verify="The key holds an allowed value, or is gone / in its right place."),
      S(title="Validate", check="OpenClaw's own validator agrees.", command="{openclaw} config validate --json",
        verify='"valid": true', runnable=True), _REPROBE])
_add(Verdict.BACKEND_RETIRED, None, "Migrate off QMD: this OpenClaw removed the backend (or install ≤ 2026.7.35)",
     "{openclaw} doctor",
     "OpenClaw 2026.8.1+ rejects memory.backend/memory.qmd; every command fails until they are gone.",
     "`openclaw doctor --fix` also deletes <state>/agents/<id>/qmd/ — back it up first if you may roll back.",
     [S(title="Decide", check="Keep QMD (pin openclaw@2026.7.35) or move to builtin memory.",
        verify="A decision recorded with the receipt."),
      S(title="Back up the QMD home", check="Copy {state}/agents/{agent}/qmd before doctor removes it.",
        command="cp -a {state}/agents/{agent}/qmd {state}/agents/{agent}/qmd.bak", verify="The copy exists."),
      S(title="Migrate", check="Doctor moves QMD paths to memory.search.extraPaths.",
        command="{openclaw} doctor --fix", verify="`{openclaw} config validate --json` says valid."), _REPROBE])
_add(Verdict.CONFIG_DRIFT, None, "Restart the gateway (or let it reload) so it runs the config on disk, then re-probe",
     "{openclaw} gateway restart",
     "The running gateway built its memory manager from an older config than the file.",
     "Don't delete or force-rebuild the index first; only if fresh status then names an index-identity mismatch, run the "
     "index command it gives.",
     [S(title="See what differs", check="The drifted memory keys are in the evidence.", verify="You know which change is unapplied."),
      S(title="Restart or reload", check="gateway.reload.mode=off keeps old config until a restart.",
        command="{openclaw} gateway restart", verify="The gateway log shows the new config applied."), _REPROBE])
_add(Verdict.CONFIG_DRIFT, "baseline_changed", "Review the memory-config change, then accept it as the new baseline",
     "clawprobe check --agent {agent} --accept-baseline",
     "The memory settings changed since the receipt the operator accepted.",
     "Don't accept a change you have not reviewed: a longer lease or a new mode hides regressions.",
     [S(title="Review", check="Compare the changed keys against the last accepted receipt.", verify="The change is intended."),
      S(title="Accept", check="Records the new config hash as the baseline.",
        command="clawprobe check --agent {agent} --accept-baseline", verify="Verdict no longer config_drift.")])

_QMD_UNAV_STEPS = [
    S(title="Resolve qmd as the gateway does", check="Use the gateway's own PATH (shown), not your login shell.",
      command="{gateway_path_env} command -v {qmd}", verify="It prints an executable path."),
    S(title="Pin an absolute command", check="memory.qmd.command set to the full path, and its interpreter (node) resolves too.",
      command="{openclaw} config set memory.qmd.command {qmd_abs}", verify="clawprobe shows qmd resolved from the gateway environment."),
    S(title="Prove a store command works", check="--version is not proof; a store command must open the index.",
      command="{agent_xdg} {qmd} collection list", verify="Exit code 0."),
    _REPROBE,
]
_add(Verdict.QMD_UNAVAILABLE, None, "Resolve qmd from the gateway's environment (absolute memory.qmd.command), then re-probe",
     "{openclaw} config set memory.qmd.command {qmd_abs}",
     "The gateway cannot start qmd, so it silently serves builtin results.",
     "Don't judge from an interactive shell, and don't treat the builtin fallback as the fault — it is the consequence.",
     _QMD_UNAV_STEPS)
_add(Verdict.QMD_UNAVAILABLE, "service_path", "Add node's and qmd's bin dirs to the service PATH, restart, re-probe",
     "systemctl --user edit openclaw-gateway",
     "qmd's launcher is `#!/usr/bin/env node`; the service PATH has no node, so spawning qmd fails (exit 127).",
     "Don't conclude anything from a login shell; pinning only the qmd path does not help when node is missing.",
     [S(title="Read the service PATH", check="systemctl --user show-environment, the unit's Environment=, or the launchd plist.",
        command="systemctl --user show-environment | grep ^PATH=", verify="You see the PATH the gateway really gets."),
      S(title="Run qmd with exactly that PATH", check="env -i with that PATH.",
        command="env -i {gateway_path_env} {qmd} --version", verify="Exit 0 (not 127 'env: node: No such file')."),
      S(title="Fix the unit and restart", check="In the unit's [Service] section: Environment=PATH= node's bin dir, "
        "npm-global's bin dir, then /usr/bin:/bin.",
        command="systemctl --user daemon-reload && systemctl --user restart openclaw-gateway",
        verify="Gateway log: no 'qmd binary unavailable'."),
      _REPROBE])
_add(Verdict.QMD_UNAVAILABLE, "native_binding", "Reinstall qmd for the Node that runs it (its native SQLite binding is broken)",
     "npm install -g @tobilu/qmd",
     "`qmd --version` works but every store command crashes: the native binding does not match the runtime "
     "(reinstall with the same Node the gateway uses, Node ≥ 22).",
     "Don't mark QMD available because --version works; don't rebuild the index — the index is fine.",
     [S(title="Confirm the crash", check="A store command under the agent's XDG dirs.", command="{agent_xdg} {qmd} collection list",
        verify="It crashes now (e.g. exit 139) — the evidence."),
      S(title="Run under a supported Node", check="qmd 2.8.3 needs Node ≥ 22; the crash is typical of Node 20.",
        command="node --version", verify="≥ 22."),
      S(title="Reinstall", check="npm install with that Node on PATH.", command="npm install -g @tobilu/qmd",
        verify="`{agent_xdg} {qmd} collection list` exits 0."), _REPROBE])
_add(Verdict.QMD_UNAVAILABLE, "transport_spawn", "Turn mcporter off (direct qmd works), then re-probe",
     "{openclaw} config set memory.qmd.mcporter.enabled false",
     "The configured transport (mcporter) cannot be spawned on this platform.",
     "Don't count the builtin answers as QMD health.",
     [S(title="Disable the transport", check="memory.qmd.mcporter.enabled",
        command="{openclaw} config set memory.qmd.mcporter.enabled false",
        verify="Tool results no longer carry fallback.from = qmd."), _REPROBE])
_add(Verdict.QMD_UNAVAILABLE, "command_path_mangled", "Put qmd on the gateway PATH and use bare `qmd` (or upgrade OpenClaw)",
     "{openclaw} config set memory.qmd.command qmd",
     "The configured path reaches spawn mangled (drive letter and separators lost).",
     "Don't read 'Indexed 0/N' as an empty index to rebuild.",
     [S(title="Compare", check="Configured command vs what OpenClaw tried to spawn (evidence).", verify="The mangling is visible."),
      S(title="Use a PATH lookup", check="qmd on the gateway PATH.", command="{openclaw} config set memory.qmd.command qmd",
        verify="qmd resolves from the gateway environment."), _REPROBE])

_add(Verdict.FALLBACK_ACTIVE, None, "Find out why QMD failed to open (gateway log), fix that, restart, re-probe",
     "grep -h 'qmd' {log_glob} | tail -20",
     "OpenClaw answers from its builtin engine: a green search proves nothing about QMD.",
     "Don't disable the fallback just to turn the checker red, and don't delete the QMD index.",
     [S(title="Read why", check="Log lines 'qmd memory unavailable/failed … falling back/switching to builtin'.",
        command="grep -h 'qmd' {log_glob} | tail -20", verify="The cause is named."),
      S(title="Fix the cause", check="Binary, XDG home, collections — whatever the log names.", verify="A direct store command works."),
      S(title="Restart the gateway", check="A runtime fallback is sticky until the manager is rebuilt.",
        command="{openclaw} gateway restart", verify="New results have the QMD shape (no id/textScore)."), _REPROBE])
_add(Verdict.FALLBACK_ACTIVE, "sticky", "QMD works now but the gateway stayed on builtin: restart the gateway, re-probe",
     "{openclaw} gateway restart",
     "One early QMD failure switched the gateway to builtin and it never switched back.",
     "Don't report healthy because a direct qmd probe passes.",
     [S(title="Confirm qmd works now", check="Direct qmd with the agent's XDG dirs finds the canary.",
        verify="It does (evidence)."),
      S(title="Restart the gateway", check="Rebuilds the memory manager.", command="{openclaw} gateway restart",
        verify="Results through OpenClaw have the QMD shape."), _REPROBE])
_add(Verdict.FALLBACK_ACTIVE, "wrong_engine",
     "QMD is configured but builtin provider errors appear: check why the QMD manager was not used",
     "grep -h 'qmd' {log_glob} | tail -20",
     "Builtin-adapter errors (missing OpenAI/Gemini/Voyage keys) under backend qmd mean the builtin engine is answering.",
     "Don't 'fix' it by adding embedding API keys — that only hides that QMD is not in use.",
     [S(title="Read the gateway log", check="Why the QMD manager was not used.", command="grep -h 'qmd' {log_glob} | tail -20",
        verify="Cause named."), S(title="Upgrade/restart", check="Then re-probe.", command="{openclaw} gateway restart",
        verify="QMD result shape."), _REPROBE])
_add(Verdict.FALLBACK_ACTIVE, "case_mismatch", "Keep exactly one root memory file (MEMORY.md), restart so collections reconcile",
     "ls {workspace}/MEMORY.md {workspace}/memory.md",
     "A lowercase root collection clashed with MEMORY.md and QMD was switched off.",
     "Don't delete the QMD index or turn the fallback off.",
     [S(title="One root file", check="Only MEMORY.md (uppercase).", command="ls {workspace}/MEMORY.md {workspace}/memory.md",
        verify="Exactly one exists."), S(title="Restart", check="Collections reconcile.", command="{openclaw} gateway restart",
        verify="No 'collection add skipped' in the log."), _REPROBE])

_add(Verdict.MEMORY_UNAVAILABLE, None, "Fix the pinned embedding provider (credentials/endpoint, quota or model "
     "name), re-index, re-probe",
     "{openclaw} memory status --deep --agent {agent}",
     "An explicitly named provider fails (refused, 401/403, 404 unknown model, 429 quota), and OpenClaw fails "
     "closed: memory search is unavailable.",
     "Don't accept a silent keyword-only state as healthy, and don't delete the index (it is not the fault); set "
     "provider 'none' only as a deliberate choice.",
     [S(title="Read the provider error", check="status --deep names it.", command="{openclaw} memory status --deep --agent {agent}",
        verify="Error understood."), S(title="Fix credentials or endpoint", check="Or set memory.search.provider none deliberately.",
        verify="Provider resolves."), _INDEX, _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "plugin_off", "Turn the memory plugin back on (plugins.slots.memory), restart, re-probe",
     "{openclaw} config set plugins.slots.memory memory-core",
     "The memory slot holds no plugin (\"none\"), so the agent has no memory search at all — not a probe fault.",
     "Don't reinstall QMD or re-index: nothing is wrong with them while the slot is empty. Leave it off only on purpose.",
     [S(title="Confirm it is not on purpose", check="Who set plugins.slots.memory to none, and why.", verify="Decision made."),
      S(title="Restore the slot", check="The bundled plugin is memory-core.",
        command="{openclaw} config set plugins.slots.memory memory-core", verify="`openclaw memory status` answers."),
      _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "plugins_disabled", "Re-enable plugins (memory is one), restart, re-probe",
     "{openclaw} config set plugins.enabled true",
     "plugins.enabled is false, so no plugin loads — memory-core included: the agent has no memory search.",
     "Don't reinstall QMD or re-index: nothing loads them while plugins are off.",
     [S(title="Confirm it is not on purpose", check="plugins.enabled = false turns off every plugin.", verify="Decision made."),
      S(title="Enable plugins", check="Then restart the gateway.", command="{openclaw} config set plugins.enabled true",
        verify="`openclaw memory status` answers."), _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "index_corrupt", "Rebuild the builtin index through OpenClaw (the DB is corrupt)",
     "{openclaw} memory index --force --agent {agent}",
     "PRAGMA quick_check fails on the builtin index: search cannot read it.",
     "Never delete openclaw-agent.sqlite (it also holds sessions); let OpenClaw rebuild atomically.",
     [S(title="Confirm", check="Read-only quick_check shows the corruption (evidence).", verify="Not ok."),
      S(title="Managed rebuild", check="Atomic rebuild into a temp DB, then rename.",
        command="{openclaw} memory index --force --agent {agent}",
        verify="quick_check ok; files indexed."), _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "runtime", "Run the gateway on a supported Node (this one lacks node:sqlite)",
     "node -e \"require('node:sqlite')\"",
     "The runtime cannot open any memory store; the provider error is a red herring.",
     "Don't chase the embedding provider.",
     [S(title="Check the runtime", check="Node version of the gateway.", command="node --version", verify="Supported (2026.9.x: ≥ 24.16)."),
      _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "rebuild_failing", "Upgrade OpenClaw/Node: index builds fail on this runtime",
     "{openclaw} --version",
     "Every index run fails at the same operation; rebuilding repeats the failing operation.",
     "Don't recommend --force or another rebuild — that is the failing operation.",
     [S(title="Upgrade", check="OpenClaw or Node.", command="{openclaw} --version", verify="Newer build."), _INDEX, _REPROBE])
_add(Verdict.KEYWORD_ONLY, None, "Choose an embedding provider, or set provider 'none' to make keyword-only deliberate",
     "{openclaw} config set memory.search.provider none",
     "The provider is unset/auto/local and resolved to nothing, so semantic recall is silently off.",
     "Don't leave it implicit: either configure a provider or say 'none'.",
     [S(title="Decide", check="Keyword-only acceptable?", verify="Decision made."),
      S(title="Configure", check="A provider with auth, or provider none.", command="{openclaw} config set memory.search.provider none",
        verify="Verdict healthy (none) or vectors present."), _INDEX, _REPROBE])

_add(Verdict.STALE_INDEX, None, "Wait for, or run, the managed update; then verify a new success time",
     "{openclaw} memory index --agent {agent}",
     "The index has not been proven current within its freshness lease.",
     "Don't run `qmd update` with hand-made XDG dirs, don't force a full rebuild, and don't lengthen the lease to turn it green.",
     [S(title="Check the schedule", check="Is the next interval update due? Is the gateway running?",
        verify="You know when the next update runs (the gateway runs and its interval is set)."),
      _INDEX, _REPROBE])
_add(Verdict.STALE_INDEX, "sync_aborted", "Replace the non-regular file that aborts every sync, then run the managed update",
     "find {workspace} -maxdepth 2 -type l",
     "One non-regular file (symlink) makes every sync fail, so the index never catches up.",
     "Don't suggest a rebuild or --force: one file blocks every sync.",
     [S(title="Find it", check="Non-regular files among memory sources.", command="find {workspace} -maxdepth 2 -type l",
        verify="Offending path named."), S(title="Replace with a regular file", check="Copy the target's content.",
        verify="No symlink left."), _INDEX, _REPROBE])
_add(Verdict.STALE_INDEX, "embed_timeout", "Reduce batch size/concurrency or raise the timeout; then index and re-probe",
     "{openclaw} memory status --deep --agent {agent}",
     "The provider probe says ready, but embedding batches exceed the timeout, so files stay unindexed.",
     "Don't trust 'Embeddings: ready' alone.",
     [S(title="See which files stay unindexed", check="Evidence lists them.",
        verify="You know which files the embedding batches never finish."), _INDEX, _REPROBE])

_add(Verdict.VECTOR_NOT_READY, None, "Finish embedding for the active model; check fingerprint consistency",
     "{openclaw} memory index --agent {agent}",
     "The configured mode needs vectors, and embeddings are pending for the active model/fingerprint.",
     "Don't force a rebuild (`qmd embed -f`) — answers still arriving is not readiness; BM25 `search` mode needs no vectors.",
     [S(title="Is an embed running?", check="Lock PID alive, vector rows growing.",
        verify="The evidence shows a live embed pid with growing vector rows, or none running."),
      S(title="Let the managed embed finish", check="OpenClaw runs qmd embed on its schedule or on index.",
        command="{openclaw} memory index --agent {agent}", verify="Pending 0 for the active model and fingerprint.", runnable=True),
      S(title="Or drop the dependency", check="If BM25 is enough.", command="{openclaw} config set memory.qmd.searchMode search",
        verify="search mode row ready."), _REPROBE])
_add(Verdict.VECTOR_NOT_READY, "embed_timeout", "Raise memory.qmd.update.embedTimeoutMs (embeds are killed before finishing)",
     "{openclaw} config set memory.qmd.update.embedTimeoutMs 3600000",
     "Each embed run is killed at the timeout; on CPU a full embed takes far longer.",
     "Don't shorten the interval or force a rebuild; warn that embedding can starve a small host.",
     [S(title="Raise the timeout", check="And lengthen embedInterval.",
        command="{openclaw} config set memory.qmd.update.embedTimeoutMs 3600000",
        verify="Next embed completes (log)."), _REPROBE])
_add(Verdict.VECTOR_NOT_READY, "model_download", "Fetch the missing {missing_models} model(s) under the agent's XDG dirs "
     "with {fetch_how}, or use search mode",
     "{fetch_models}",
     "A model the mode needs is missing or stuck downloading (first-run download of ~2 GB of GGUF models). qmd "
     "loads a model only when a command needs it: `qmd embed` the embed model (and only with documents to embed); "
     "`vsearch` the generate + embed models; `query` generate, embed and rerank.",
     "Don't restart repeatedly mid-download, and don't call a slow first query a hang without stall evidence; never `qmd "
     "pull` as a probe (it deletes cached models offline).",
     [S(title="Watch the download", check="Bytes growing in models/*.ipull (download watcher).",
        verify="Growing, or stalled with evidence."),
      S(title="Fetch on a host that can", check="On a host that reaches Hugging Face: {fetch_how} with the agent's "
        "env (or copy the GGUF files into the model cache).",
        command="{fetch_models}", verify="All needed models complete (GGUF magic, no .ipull)."),
      S(title="Or use BM25", check="If semantic recall is not needed.", command="{openclaw} config set memory.qmd.searchMode search",
        verify="search row ready."), _REPROBE])

_add(Verdict.SCOPE_DENIED, None, "Re-run the probe in an allowed context (explicit agent, direct session) or review scope rules",
     "{openclaw} config get memory.qmd.scope",
     "QMD's scope policy refused the probe: retrieval is unproven, not failed.",
     "Don't report retrieval_failed, and don't rebuild.",
     [S(title="Read the scope", check="default deny + rules; the CLI probe runs as chatType=direct, channel=cli.",
        command="{openclaw} config get memory.qmd.scope", verify="An allow rule matches direct sessions."), _REPROBE])

_add(Verdict.RETRIEVAL_FAILED, None,
     "Inspect collection scope, file pattern, update evidence and the exact token before rebuilding anything",
     "{agent_xdg} {qmd} search {token} --json",
     "The canary did not come back from its expected source through OpenClaw.",
     "Don't rebuild the index first: it destroys the evidence that tells a path fault from a freshness fault.",
     [S(title="Is the file in a managed collection?", check="Not hidden, not lowercase memory.md, not a symlink, matches the pattern.",
        verify="The canary path is one OpenClaw indexes."),
      S(title="Does the index hold it?", check="Direct BM25 qmd search with the agent's XDG dirs (the token is read "
        "from the canary file).", command="{agent_xdg} {qmd} search {token} --json",
        verify="Found → it is indexed (in search mode: an OpenClaw-side fault); missing → ingestion fault."),
      _INDEX, _REPROBE])
_RETRIEVAL_REASONS = {
    "hidden_path": ("Move the canary out of the hidden directory (hidden paths are never indexed)",
                    "mv -n {canary_file} {workspace}/memory/", "QMD's scanner skips dot-paths."),
    "case_mismatch": ("Rename lowercase memory.md to MEMORY.md (only MEMORY.md is a root collection)",
                      "mv {workspace}/memory.md {workspace}/MEMORY.md",
                      "The root collection's pattern is MEMORY.md; builtin skips lowercase too."),
    "symlink": ("Replace the symlink with a real file/dir, or point extraPaths at the real path",
                "find {workspace} -type l", "Symlinks are skipped by policy; a rebuild changes nothing."),
    "wrong_store": ("Let OpenClaw build its managed collections (the managed index is empty)",
                    "{openclaw} memory index --agent {agent}", "Collections were built in the default qmd store, not the agent's."),
    "timeout": ("Compare probe latency with the search timeout; use search mode or raise limits.timeoutMs",
                "{openclaw} config set memory.qmd.searchMode search", "The probe ran out of time rather than missing."),
    "search_not_invoked": ("OpenClaw never ran the search although the index has the canary: upgrade OpenClaw",
                           "{openclaw} --version", "Backend up, index fresh, canary indexed, OpenClaw returns nothing."),
    "cjk": ("Keyword search cannot segment this CJK text: upgrade qmd, use literal short keywords or semantic modes",
            "{qmd} --version", "The tokenizer does not split CJK runs."),
    "resource": ("Reduce index size/collections or use search mode: the query exhausts memory",
                 "{openclaw} config set memory.qmd.searchMode search", "The query dies on a resource limit."),
    "sessions_export": ("Enable the failing session gate (sessionMemory, sources, qmd.sessions.enabled, visibility)",
                        "{openclaw} config set memory.qmd.sessions.enabled true", "Transcripts never reach QMD."),
    "extrapaths_dropped": ("Re-run the managed index and re-probe after one watcher cycle; upgrade",
                           "{openclaw} memory index --agent {agent}", "The watcher sync drops extra-path files."),
    "fts5_missing": ("Run the gateway on a Node build whose SQLite has FTS5", "node -p process.versions.sqlite",
                     "Keyword search is impossible on this runtime."),
    "wrong_source": ("The token came back from another file: make the canary token unique, check duplicates",
                     "grep -rlF {token} {workspace}", "A different file answered."),
}
for _reason, (_t, _c, _w) in _RETRIEVAL_REASONS.items():
    _base = _CATALOG[(Verdict.RETRIEVAL_FAILED, None)]
    _add(Verdict.RETRIEVAL_FAILED, _reason, _t, _c, _w, _base.dont,
         [S(title="Narrow fix", check=_w, command=_c, verify="The canary comes back from its expected path."), _REPROBE])

_PLANT_STEPS = [
    S(title="Plant", check="A synthetic token in memory/clawprobe-canary.md (no real data).",
      command="clawprobe canary plant --agent {agent}", verify="Canary file and hash recorded."),
    S(title="Wait for or run the update", check="The managed path indexes it.", command="{openclaw} memory index --agent {agent}",
      verify="Canary indexed.", runnable=True), _REPROBE]
_add(Verdict.UNVERIFIED, None, "Get the missing evidence (listed), then re-probe",
     "clawprobe check --agent {agent}",
     "Something the verdict needs was not measured (the evidence lists it): unproven is never healthy.",
     None, [_REPROBE])
_add(Verdict.UNVERIFIED, "no_canary", "Plant a canary and let the update cycle run, then re-probe",
     "clawprobe canary plant --agent {agent}",
     "Everything measured passes, but no canary has proven the managed path yet — never call that healthy.",
     None, _PLANT_STEPS)
_FIND_OPENCLAW = S(title="Make the OpenClaw CLI findable", check="Install OpenClaw, put its bin dir on PATH, or set "
                   "CLAWPROBE_OPENCLAW to the executable the gateway runs.",
                   command="command -v openclaw", verify="clawprobe finds the CLI (no 'no `openclaw` executable' error).")
_add(Verdict.UNVERIFIED, "openclaw_not_found", "Make the OpenClaw CLI findable (install it, add it to PATH, or set "
     "CLAWPROBE_OPENCLAW), then re-probe: its probes could not run",
     "command -v openclaw",
     "No `openclaw` executable was found (running gateway, gateway PATH, shell PATH, $CLAWPROBE_OPENCLAW), so the "
     "effective backend and the canary retrieval were never measured — nothing is proven.",
     "Don't read the missing OpenClaw evidence as passing, and don't plant or rotate the canary to 'fix' it.",
     [_FIND_OPENCLAW, _REPROBE])
_add(Verdict.UNVERIFIED, "openclaw_failed", "Make the OpenClaw CLI run (the error is in the evidence), then re-probe",
     "{openclaw} --version",
     "An `openclaw` command clawprobe needs failed, so what it measures is unproven.",
     "Don't read the missing OpenClaw evidence as passing.",
     [S(title="Run the CLI", check="The same executable clawprobe found.", command="{openclaw} --version",
        verify="It prints its version (exit 0)."), _REPROBE])
_add(Verdict.UNVERIFIED, "probe_failed", "A probe could not run (the evidence says why): fix that, then re-probe",
     "clawprobe check --agent {agent}",
     "A probe could not run, so part of the verdict is unproven.",
     "Don't read the missing evidence as passing.", [_REPROBE])
_add(Verdict.UNVERIFIED, "not_retrieved", "Run the retrieval probe through OpenClaw (r in the dashboard), then read the verdict",
     "clawprobe check --agent {agent}",
     "A canary is planted, but no search through OpenClaw has retrieved it yet.",
     "Don't search with qmd directly in place of OpenClaw: that proves a different path.",
     [S(title="Retrieve through OpenClaw", check="clawprobe runs `openclaw memory search <token> --json --agent {agent}`.",
        command="clawprobe check --agent {agent}", verify="Canary found from its expected path.")])
_add(Verdict.UNVERIFIED, "canary_not_indexed", "Wait for the next update cycle (or run the managed update), then re-probe",
     "{openclaw} memory index --agent {agent}",
     "The canary was planted within the lease and no update has indexed it yet: a miss now proves nothing.",
     "Don't call it a retrieval failure before one update cycle had the chance to run.",
     [_INDEX, _REPROBE])
_add(Verdict.UNVERIFIED, "unrecognized_signal", "Read this; clawprobe cannot judge it — the quoted memory "
     "error/warning, at its source, before trusting memory search",
     None,
     "Every gate passed, but OpenClaw or qmd reported something about memory that no clawprobe rule explains "
     "(quoted in the evidence with where it was seen). Healthy would be a guess.",
     "Don't read it as healthy, and don't rebuild or re-index to make it go away: first find out what it means.",
     [S(title="Read the quoted line at its source", check="The evidence names the log file, or the command whose "
        "stderr or exit status it was.", verify="You know which part of memory search it is about."),
      S(title="Ask OpenClaw what it sees", check="Its own deep status for this agent.",
        command="{openclaw} memory status --deep --agent {agent}", verify="The same problem shows there, or not."),
      S(title="Fix what it names, or judge it harmless", check="Then re-probe; a line judged harmless stays listed "
        "until clawprobe learns it.", verify="The line is gone, or understood."), _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "search_crash", "Index first, then search: `openclaw memory search` crashes natively "
     "(no output) on this index — a known bug, so upgrade OpenClaw",
     "{openclaw} memory index --agent {agent}",
     "The search process died with a native crash code and printed nothing; with an empty index a single-token "
     "query hits the crash. Indexing (a provider, or provider 'none' plus an index run) gives it data.",
     "Don't read the empty output as 'no results', and don't reinstall the provider: the crash is the fault.",
     [S(title="See the index is empty", check="status counts 0 indexed files.", command="{openclaw} memory status --agent {agent}",
        verify="The count of indexed files."),
      S(title="Index first", check="Choose a provider, or set provider 'none' deliberately, then index.",
        command="{openclaw} memory index --agent {agent}", verify="Files indexed > 0.", runnable=True),
      S(title="Upgrade OpenClaw", check="The crash on an empty result set is a fixed bug (oc#118724).",
        command="{openclaw} --version", verify="A build newer than the one that crashed."), _REPROBE])
_add(Verdict.VECTOR_NOT_READY, "vector_extension", "Fix the sqlite-vec load (the runtime/package that ships the "
     "extension) or upgrade OpenClaw — not the provider",
     "{openclaw} memory status --deep --agent {agent}",
     "The builtin vector store (sqlite-vec) does not load, so chunks get no vectors and only keyword hits remain; "
     "the embedding provider answers fine.",
     "Don't change or re-key the embedding provider, and don't rebuild the index: without the extension a rebuild "
     "stores no vectors either.",
     [S(title="Read the load error", check="status --deep shows vector.loadError.",
        command="{openclaw} memory status --deep --agent {agent}", verify="The sqlite-vec load error is named."),
      S(title="Fix the runtime", check="Reinstall OpenClaw for the Node that runs the gateway (the package ships "
        "sqlite-vec for that platform), or upgrade.", verify="vector.available true."), _REPROBE])
_add(Verdict.STALE_INDEX, "reindex_locked", "Find the reindex lock holder first: stop the gateway, clear the stale "
     "lock, rebuild once, restart",
     "{openclaw} gateway stop",
     "An index run is refused because another process (usually the running gateway) holds the reindex lock, so "
     "`memory index` cannot succeed while it runs.",
     "Don't run `index --force` in a loop: each refused attempt leaves a *.memory-reindex-* copy on disk.",
     [S(title="Stop the lock holder", check="The gateway takes the reindex lock after start.",
        command="{openclaw} gateway stop", verify="No gateway process runs for this state dir."),
      S(title="Clear a stale lock", check="OpenClaw's own repair of its memory store.",
        command="{openclaw} memory status --fix --agent {agent}", verify="No lock is reported."),
      S(title="Rebuild once", check="With the gateway stopped.", command="{openclaw} memory index --agent {agent}",
        verify="Indexed equals the files on disk."),
      S(title="Restart the gateway", check="Then re-probe.", command="{openclaw} gateway start",
        verify="The gateway runs; clawprobe shows the index current."), _REPROBE])
_add(Verdict.STALE_INDEX, "reindex_locked/holder_other", "Stop the process holding the reindex lock ({lock_holder}) "
     "— it is not the gateway — then rebuild once",
     "ps -o pid,etime,args -p {lock_pid}",
     "An index run is refused because another process holds the builtin reindex lock (a write lock on the "
     "*.reindex-lock.sqlite sidecar, measured in /proc): stopping the gateway would not release it.",
     "Don't stop the gateway for this, don't delete the lock file while its holder runs, and don't run "
     "`index --force` in a loop: each refused attempt leaves a *.memory-reindex-* copy on disk.",
     [S(title="See the holder", check="The process that holds the reindex lock ({lock_holder}).",
        command="ps -o pid,etime,args -p {lock_pid}", verify="You know what it is (a stuck `memory index`, a script)."),
      S(title="Stop it", check="Let it finish, or end it when it is stuck.", command="kill {lock_pid}",
        verify="No process holds the lock (clawprobe's lock gate: not held)."),
      S(title="Rebuild once", check="With the lock free.", command="{openclaw} memory index --agent {agent}",
        verify="Indexed equals the files on disk."), _REPROBE])
_add(Verdict.STALE_INDEX, "reindex_locked/no_holder", "The reindex lock has no holder any more: clear it with "
     "`openclaw memory status --fix`, then rebuild once",
     "{openclaw} memory status --fix --agent {agent}",
     "An index run was refused by the reindex lock, but no process holds the *.reindex-lock.sqlite sidecar now "
     "(none has it open or locked in /proc): the lock is stale, left by a holder that is gone.",
     "Don't stop or restart the gateway for this — it does not hold the lock — and don't run `index --force` in a "
     "loop.",
     [S(title="Clear the stale lock", check="OpenClaw's own repair of its memory store.",
        command="{openclaw} memory status --fix --agent {agent}", verify="No lock is reported."),
      S(title="Rebuild once", check="Nothing holds the lock now.", command="{openclaw} memory index --agent {agent}",
        verify="Indexed equals the files on disk."), _REPROBE])
_add(Verdict.STALE_INDEX, "lock_contention", "Let the running embed finish (or serialise the update/embed timers), "
     "and upgrade qmd (busy_timeout); the updates die on a locked database",
     None,
     "Overlapping qmd processes: an update that starts during a long embed dies at its first write with "
     "SQLITE_BUSY, so the index stays stale until the embed ends.",
     "Don't rebuild or run a forced update: the lock, not the index, is the fault.",
     [S(title="See who holds the database", check="A long `qmd embed` (or a second gateway) runs.",
        command="pgrep -af 'qmd (embed|update)'", verify="The holder is known."),
      S(title="Let it finish or serialise the timers", check="Longer memory.qmd.update.interval than an embed takes.",
        verify="No SQLITE_BUSY lines after the next interval."),
      S(title="Upgrade qmd", check="qmd with busy_timeout waits for the lock instead of failing.",
        command="{qmd} --version", verify="A qmd with busy_timeout (2.8+)."), _REPROBE])
_add(Verdict.CONFIG_DRIFT, "stale_handle", "Restart the gateway: it still serves memory from the index file it "
     "opened before the last out-of-process index run",
     "{openclaw} gateway restart",
     "The CLI sees a good index, but the running gateway's memory_search calls come back disabled/unavailable after "
     "it: an out-of-process rebuild swapped the file and the gateway kept the old (deleted) one open.",
     "Don't reindex again: the index on disk is fine; only a restart makes the gateway open it.",
     [S(title="Restart", check="The gateway re-opens the index on start.", command="{openclaw} gateway restart",
        verify="The next memory_search in a chat returns results."), _REPROBE])
_add(Verdict.HEALTHY, "reindex_orphans", "Nothing urgent for search, but disk is at risk: remove the orphaned "
     "*.memory-reindex-* copies while no reindex runs, and upgrade OpenClaw",
     "ls -la {state}/agents/{agent}/agent",
     "Aborted full reindexes leave their temporary databases (and -wal files) next to the index; search works, "
     "but every aborted attempt adds another copy.",
     "Don't rebuild: a full reindex is what leaves the copies. Never delete openclaw-agent.sqlite itself.",
     [S(title="List the copies", check="Names ending in .memory-reindex-<id> (plus -wal/-shm).",
        command="ls -la {state}/agents/{agent}/agent", verify="You see the orphans and their sizes."),
      S(title="Remove them while no reindex runs", check="No `openclaw memory index` and no rebuild in progress.",
        verify="Only the live index and its sidecars remain."),
      S(title="Upgrade OpenClaw", check="The revision race that aborts rebuilds is fixed in later builds.",
        command="{openclaw} --version", verify="A newer build."), _REPROBE])
_BUILTIN_LOOK = S(title="Ask OpenClaw what its builtin index holds", check="Indexed vs files on disk per source, "
                  "scan issues, provider and vector state.", command="{openclaw} memory status --deep --agent {agent}",
                  verify="The canary's file is counted, or the issue that skips it is named.")
_add(Verdict.RETRIEVAL_FAILED, "miss/builtin", "Inspect the canary's path and the builtin index (OpenClaw's own "
     "status) before rebuilding anything",
     "{openclaw} memory status --deep --agent {agent}",
     "The canary did not come back from its expected source through OpenClaw's builtin engine.",
     "Don't rebuild the index first: it destroys the evidence that tells a path fault from a freshness fault.",
     [S(title="Is the file one OpenClaw indexes?", check="Not hidden, not lowercase memory.md, not a symlink, under "
        "MEMORY.md, memory/ or an extra path.", verify="The canary path is one OpenClaw indexes."),
      _BUILTIN_LOOK, _INDEX, _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "timeout/builtin", "Compare probe latency with the agent's memory_search deadline: the "
     "builtin search (embedding the query) ran out of time",
     "{openclaw} memory status --deep --agent {agent}",
     "The probe ran out of time rather than missing; on builtin the query embedding (the provider) is the slow part, "
     "and the agent tool's deadline is fixed: make the query faster (a faster or local embedding provider), a "
     "longer QMD timeout key does nothing here.",
     "Don't rebuild: a timeout is not a miss.", [_BUILTIN_LOOK, _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "resource/builtin", "Reduce what the builtin index holds (extra paths) or the host "
     "load: the search dies on a resource limit",
     "{openclaw} memory status --deep --agent {agent}",
     "The query dies on a resource limit (heap, OOM killer).",
     "Don't rebuild: a bigger index makes it worse.", [_BUILTIN_LOOK, _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "sessions_export/builtin", "Enable the failing session gate (experimental.sessionMemory, "
     "sources including sessions, tools.sessions.visibility)",
     "{openclaw} config set agents.defaults.memorySearch.experimental.sessionMemory true",
     "Session transcripts are searched only when every session gate is open.",
     "Don't rebuild: the gate, not the index, keeps transcripts out.",
     [S(title="Open the gate named in the evidence", check="sessionMemory, sources, visibility.",
        command="{openclaw} config set agents.defaults.memorySearch.experimental.sessionMemory true",
        verify="The gate passes."), _REPROBE])
_add(Verdict.STALE_INDEX, "lock_contention/builtin", "Find the other writer of the builtin index (a second gateway "
     "or a stuck index run) and let it finish or stop it; the syncs die on a locked database",
     "pgrep -af 'openclaw'",
     "Two processes write the agent's index: every sync that meets the other's write lock fails with SQLITE_BUSY.",
     "Don't rebuild or force an index run: the lock, not the index, is the fault.",
     [S(title="Find the other writer", check="A second gateway for the same state dir, or an index run that never ended.",
        command="pgrep -af 'openclaw'", verify="Only one gateway runs."), _REPROBE])
_add(Verdict.VECTOR_NOT_READY, "embed_timeout/model_missing", "Switch to searchMode search until embedding works, "
     "then fetch the embed model (it is not in the cache) — a longer embed timeout cannot help",
     "{openclaw} config set memory.qmd.searchMode search",
     "Embeds are killed at memory.qmd.update.embedTimeoutMs, but the embed model is missing from the agent's cache: "
     "the embed waits on a download (or a model init that hangs), so raising embedTimeoutMs only waits longer. "
     "BM25 search needs no vectors and works now.",
     "Don't raise embedTimeoutMs and don't force a re-embed before the model is there.",
     [S(title="Use search mode now", check="BM25 needs no vectors or models.",
        command="{openclaw} config set memory.qmd.searchMode search", verify="clawprobe: search mode ready."),
      S(title="Fetch the embed model", check="Into the agent's XDG cache (the download watcher shows progress); on "
        "Windows, a hang at 'Gathering information' is the model runtime (node-llama-cpp) — fix or upgrade it.",
        verify="The embed model is complete in the cache."),
      S(title="Go back to the vector mode", check="Once an embed finishes.", verify="0 pending."), _REPROBE])
_INSTALL_QMD = S(title="Install qmd", check="The package is @tobilu/qmd (the npm package named `qmd` is another "
                 "program); install it with the Node the gateway runs.", command="npm install -g @tobilu/qmd",
                 verify="`qmd --version` prints `qmd <version> (<commit>)`.")
_PIN_QMD = S(title="Pin its absolute path", check="memory.qmd.command = the installed qmd (`command -v qmd` once "
             "installed), so the gateway's PATH does not matter.", verify="clawprobe shows qmd resolved from the "
             "gateway environment.")
for _tag in ("not_on_path", "command_missing", "not_executable", "not_qmd"):
    _add(Verdict.QMD_UNAVAILABLE, f"{_tag}/not_installed", "Install qmd first — `npm install -g @tobilu/qmd` — it is "
         "not installed anywhere the gateway or your shell could run it; then point memory.qmd.command at it",
         "npm install -g @tobilu/qmd",
         "No working qmd was found in the gateway's environment (its PATH, the qmd child's PATH) or the usual install "
         "dirs: fixing PATH or the command cannot help until qmd exists.",
         "Don't install the npm package `qmd` (another program), and don't rebuild the index.",
         [_INSTALL_QMD, _PIN_QMD, _REPROBE])
_add(Verdict.QMD_UNAVAILABLE, "not_qmd/wrong_package", "Replace the wrong npm package `qmd` with `@tobilu/qmd` (the "
     "configured command is another program named qmd)",
     "npm uninstall -g qmd && npm install -g @tobilu/qmd",
     "memory.qmd.command resolves into the npm package `qmd`, an unrelated program that does not answer as qmd; "
     "OpenClaw's qmd is the package @tobilu/qmd.",
     "Don't keep the wrong package on PATH ahead of the right one, and don't rebuild the index.",
     [S(title="Swap the package", check="Remove `qmd`, install `@tobilu/qmd` with the gateway's Node.",
        command="npm uninstall -g qmd && npm install -g @tobilu/qmd", verify="`qmd --version` prints `qmd <version>`."),
      _PIN_QMD, _REPROBE])
_add(Verdict.HEALTHY, None, "Nothing to repair", None, "Every gate passed at check time; the receipt expires with the lease.", None, [])
_add(Verdict.HEALTHY, "index_bloat", "Nothing urgent: index bloat — narrow extra paths or clean orphans with the agent's dirs",
     "{agent_xdg} {qmd} cleanup --dry-run",
     "Search is correct, but the index carries many orphaned vectors or dependency files.",
     "Don't rebuild; run cleanup only with the agent's XDG dirs (never the default ones).",
     [S(title="Dry run", check="See what cleanup would remove.", command="{agent_xdg} {qmd} cleanup --dry-run", verify="Listed.")])


# Sub-reasons of the real-world corpus (RW01–RW44) the entries above did not name. A key ``reason/engine``
# (``cjk/builtin``) is an engine-specific entry: :func:`repair_for` prefers it for that configured backend.
_NO_REBUILD = "Don't rebuild the index or run --force: it cannot help here and destroys evidence."
_add(Verdict.FALLBACK_ACTIVE, "timeout", "QMD timed out and the gateway switched to builtin: compare latency with "
     "limits.timeoutMs, use search mode or raise the timeout, then restart the gateway",
     "{openclaw} config set memory.qmd.searchMode search",
     "A QMD search ran past limits.timeoutMs and OpenClaw served the builtin engine instead.",
     "Don't disable the fallback, and don't count the builtin answers as QMD health. " + _NO_REBUILD,
     [S(title="Measure", check="Probe latency next to limits.timeoutMs (evidence).",
        verify="The latency is over limits.timeoutMs (or a lock/hang explains it)."),
      S(title="Use BM25 search mode or a larger timeout", check="memory.qmd.searchMode or memory.qmd.limits.timeoutMs.",
        command="{openclaw} config set memory.qmd.searchMode search", verify="Searches finish inside the deadline."),
      S(title="Restart the gateway", check="A runtime fallback stays until the manager is rebuilt.",
        command="{openclaw} gateway restart", verify="Results have the QMD shape."), _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "implicit_provider", "No embedding provider was chosen and this build disables "
     "memory instead of falling back: set provider 'none' for keyword search, or configure a provider with API-key auth",
     "{openclaw} config set {provider_key} none",
     "The provider is unset/auto, no embedding key is configured, and this build fails closed: every memory "
     "search returns nothing or disabled.",
     "Don't tell the user memory works; newer builds degrade to keyword-only by themselves. " + _NO_REBUILD,
     [S(title="Decide", check="Keyword-only acceptable, or semantic recall needed?", verify="Decision made."),
      S(title="Set the provider", check="'none' (deliberate keyword search) or a provider with an API key.",
        command="{openclaw} config set {provider_key} none", verify="memory status names the provider."), _INDEX, _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "local_model", "The local embedding model cannot load: point local.modelPath at a "
     "GGUF embedding model (or install the llama.cpp provider plugin / choose another provider), or set provider 'none'",
     "{openclaw} memory status --deep --agent {agent}",
     "The 'local' provider names a model the runtime cannot load (not a GGUF, or no local embedding runtime).",
     "Don't retry downloads in a loop. " + _NO_REBUILD,
     [S(title="Read the load error", check="status --deep names it.", command="{openclaw} memory status --deep --agent {agent}",
        verify="Error understood."),
      S(title="Fix the model", check="A GGUF embedding model path, another provider, or provider 'none' deliberately.",
        verify="The provider loads."), _INDEX, _REPROBE])
_add(Verdict.KEYWORD_ONLY, "local_model", "The local embedding model cannot load, so search fell back to keywords: "
     "point local.modelPath at a GGUF embedding model, or set provider 'none' deliberately",
     "{openclaw} memory status --deep --agent {agent}",
     "This build degrades a failing 'local' provider to keyword-only search without an error.",
     "Don't retry downloads in a loop, and don't leave it implicit.",
     [S(title="Fix the model or say 'none'", check="A GGUF embedding model, or provider 'none'.", verify="Decided."),
      _INDEX, _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "fts5_missing", "Run the gateway on a Node build whose SQLite has FTS5 (an official LTS)",
     "node -p process.versions.sqlite",
     "Keyword search is impossible on this runtime and no embedding provider is left: nothing can be searched.",
     "Don't rebuild: this runtime cannot create the FTS5 table.",
     [S(title="Check the runtime", check="SQLite compile options of the gateway's Node (ENABLE_FTS5).",
        command="node -p process.versions.sqlite", verify="A Node whose SQLite has FTS5."), _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "embed_timeout", "Nothing was ever indexed: embedding batches time out — reduce batch "
     "size/concurrency, use a faster model or host, or raise the timeout; then index",
     "{openclaw} memory status --deep --agent {agent}",
     "The provider probe says ready, but every embedding batch runs past its timeout, so the index stays empty.",
     "Don't trust 'Embeddings: ready' alone, and don't rebuild in a loop.",
     [S(title="Shrink the batches", check="Batch size/concurrency, a faster model or host.", verify="A batch finishes."),
      _INDEX, _REPROBE])
_add(Verdict.MEMORY_UNAVAILABLE, "index_locked", "Another process holds the memory index locked: find it (a second "
     "gateway, a stuck index run) and stop it, then re-probe",
     "fuser -v {state}/agents/{agent}/agent/openclaw-agent.sqlite",
     "Searches fail with 'database is locked': a writer keeps the index's lock.",
     "Don't delete the database or its -wal/-shm files, and don't force a rebuild: the lock is the fault.",
     [S(title="Find the lock holder", check="Processes with the index open.",
        command="fuser -v {state}/agents/{agent}/agent/openclaw-agent.sqlite", verify="Holder named."),
      S(title="Stop it", check="A duplicate gateway or a hung index run.", verify="No holder left."), _REPROBE])
_add(Verdict.VECTOR_NOT_READY, "status_misreport", "This qmd reports partly embedded documents as done: upgrade qmd, "
     "then let the managed embed run again",
     "{qmd} --version",
     "Per-document chunk coverage in the index is below total_chunks although qmd status shows no pending work.",
     "Don't trust an old qmd's 'Pending: 0' alone, and don't force a rebuild (`qmd embed -f`).",
     [S(title="Upgrade qmd", check="Fixed versions count partial documents as pending.", command="{qmd} --version",
        verify="A current qmd."),
      S(title="Embed again", check="Through OpenClaw's managed path.", command="{openclaw} memory index --agent {agent}",
        verify="Every document has all its chunks.", runnable=True), _REPROBE])
_add(Verdict.VECTOR_NOT_READY, "embed_interrupted", "Let the interrupted embedding finish for the active model "
     "(longer update.embedTimeoutMs and embedInterval, a quiet host), or use searchMode 'search' if BM25 is enough",
     "{openclaw} config set memory.qmd.update.embedTimeoutMs 3600000",
     "Embed runs keep being cut off before every document has vectors; answers still arriving is not readiness.",
     "Don't force a rebuild (`qmd embed -f`); BM25 `search` mode needs no vectors.",
     [S(title="Is an embed running?", check="Lock PID alive, vector rows growing.",
        verify="The evidence shows a live embed pid with growing vector rows, or none running."),
      S(title="Give it time", check="Longer embedTimeoutMs/embedInterval.",
        command="{openclaw} config set memory.qmd.update.embedTimeoutMs 3600000", verify="Pending reaches 0."),
      S(title="Or drop the dependency", check="If BM25 is enough.", command="{openclaw} config set memory.qmd.searchMode search",
        verify="search mode row ready."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "cjk/qmd", "QMD's keyword index does not segment this CJK text: upgrade qmd (newer "
     "versions normalise CJK), or use vsearch/query so semantic recall covers it",
     "{qmd} --version",
     "The CJK canary misses in BM25 while the text is in the notes.",
     "Don't suggest the builtin tokenizer setting while QMD is the backend. " + _NO_REBUILD,
     [S(title="Check qmd", check="CJK normalisation arrived in newer qmd.", command="{qmd} --version", verify="Upgraded."),
      _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "cjk/builtin", "Known limit of this build's keyword query builder (a CJK question is "
     "matched as one exact phrase): use short literal keywords, rely on vector recall, or upgrade OpenClaw",
     "{openclaw} --version",
     "The FTS tokenizer is already trigram and the index identity records it; the query planner still quotes "
     "the whole CJK run.",
     "Don't run yet another --force rebuild: the index is fine.",
     [S(title="Try a literal keyword", check="A 3+ character CJK run that is literally in a note is found.",
        verify="Found (control)."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "tokenizer_script/builtin", "Switch the builtin FTS tokenizer to trigram, then rebuild "
     "the index once: the notes' script has no spaces for unicode61 to split at",
     "{openclaw} config set {provider_key_parent}.store.fts.tokenizer trigram",
     "The keyword index (unicode61/porter) keeps each CJK/Thai run as one token, so a search for a word inside a "
     "note never matches, and the index has no vectors to fall back on. The trigram tokenizer indexes every "
     "3-character piece; a tokenizer change is an index-identity change, so one rebuild follows.",
     "Don't plant Latin-only canaries as proof: they pass while these notes stay unfindable. Don't rebuild before "
     "the tokenizer is changed — the same tokenizer builds the same index.",
     [S(title="Set the tokenizer", check="The builtin store's FTS tokenizer (unicode61 or trigram).",
        command="{openclaw} config set {provider_key_parent}.store.fts.tokenizer trigram",
        verify="config get shows trigram."),
      S(title="Rebuild once", check="The identity changed with the tokenizer.",
        command="{openclaw} memory index --force --agent {agent}", verify="Indexed equals the files on disk."),
      S(title="Or add embeddings", check="A provider gives semantic recall over every script.",
        command="{openclaw} config get {provider_key}", verify="A provider other than none."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "chat_denied/qmd", "Allow group/channel chats in the QMD scope: the agent's memory "
     "searches there are denied by scope while direct chats and the CLI work",
     "{openclaw} config get memory.qmd.scope",
     "QMD's scope policy (default deny; rules by chatType) refuses memory_search in group/channel sessions, so the "
     "agent answers there without memory; the CLI probe runs as a direct session and passes.",
     "Don't rebuild or re-index: the index is fine. Don't judge group chats by the CLI probe.",
     [S(title="Read the scope", check="memory.qmd.scope: default and rules (chatType direct/group/channel).",
        command="{openclaw} config get memory.qmd.scope", verify="A rule allows chatType group (or channel)."),
      S(title="Restart the gateway", check="It reads the scope at start.", command="{openclaw} gateway restart",
        verify="The next group-chat memory_search returns results."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "chat_denied/builtin", "Group/channel chats are refused memory_search: review the "
     "tool policy for those chats (the builtin engine and the CLI work)",
     "{openclaw} config get tools",
     "The agent's memory_search calls in group/channel sessions come back denied while direct chats and the CLI "
     "probe find the canary: a per-chat tool policy, not the index, refuses them.",
     "Don't rebuild or re-index, and don't change the embedding provider: retrieval works where it is allowed.",
     [S(title="Read the tool policy", check="tools allow/deny lists and group-chat tool policy.",
        command="{openclaw} config get tools", verify="memory_search is allowed in group chats."),
      S(title="Restart the gateway", check="It reads the policy at start.", command="{openclaw} gateway restart",
        verify="The next group-chat memory_search returns results."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "chat_disabled", "Restart the gateway: its memory_search in group/channel chats "
     "comes back disabled while the CLI finds the canary",
     "{openclaw} gateway restart",
     "The running gateway serves memory as disabled/unavailable to group or channel sessions, while a fresh CLI "
     "process searches the same index fine: the gateway's memory manager is stale or failed in those sessions.",
     "Don't rebuild or re-index first: the index answers the CLI.",
     [S(title="Restart the gateway", check="A fresh memory manager for every session.",
        command="{openclaw} gateway restart", verify="The gateway runs again."),
      S(title="Check a group chat", check="Ask the agent in a group chat to recall a note.",
        verify="memory_search returns results in the transcript."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "wrong_store/qmd", "Let OpenClaw build its managed collections in the agent's own QMD "
     "store (the managed index is empty)",
     "{openclaw} memory index --agent {agent}",
     "The collections were built by hand in the default qmd store; OpenClaw searches the agent's store.",
     "Don't run `qmd collection add`/`qmd update` in the default XDG dirs, and don't copy the default index over "
     "the managed one.",
     [S(title="Inspect the managed store", check="The agent's XDG dirs, not the default ones.",
        command="{agent_xdg} {qmd} collection list", verify="memory-root/memory-dir collections listed."),
      _INDEX, _REPROBE])
_add(Verdict.HEALTHY, "status_misreport", "Nothing to repair: the tool's own status misreports — trust the measured "
     "probe", None,
     "The canary came back through OpenClaw from the expected source; a status line says otherwise (shown).",
     "Don't act on the misreported status: no embed, no provider change, no rebuild.", [])
_add(Verdict.HEALTHY, "index_bloat/builtin", "Nothing urgent: dependency files dominate the index — narrow the extra "
     "path or its pattern (or use the exclude option of newer builds)",
     "{openclaw} config get {provider_key_parent}.extraPaths",
     "Search is correct, but most indexed files come from dependency/vendor dirs.",
     "Don't report a failure, and don't rebuild by default.",
     [S(title="Narrow the extra path", check="Point it at the docs you want, not the project root.",
        verify="Dependency share below half."), _REPROBE])


# QMD faults found by probing qmd and its index (clawprobe.core.probes.qmd_binary, qmd_index, workspace): the narrow repair
# for what the evidence names — never the generic "pin an absolute command" or "run the managed update".
_add(Verdict.QMD_UNAVAILABLE, "not_qmd", "Point memory.qmd.command at the qmd binary: the configured program is "
     "not qmd (see what its `--version` printed)",
     "{openclaw} config set memory.qmd.command {qmd_abs}",
     "memory.qmd.command runs a program that does not answer `--version` as qmd (`qmd <version> (<commit>)`), so "
     "the gateway never gets a qmd answer; clawprobe does not run its store command.",
     "Don't keep a wrapper that hides qmd's output, and don't rebuild the index — nothing is wrong with it.",
     [S(title="Pin an absolute command", check="memory.qmd.command set to the qmd executable (shown when one was "
        "found: {qmd_found}).", command="{openclaw} config set memory.qmd.command {qmd_abs}",
        verify="clawprobe shows qmd resolved from the gateway environment."),
      S(title="Prove a store command works", check="--version is not proof; a store command must open the index.",
        command="{agent_xdg} {qmd_abs} collection list", verify="Exit code 0."), _REPROBE])
_MOVE_ASIDE = S(title="Keep the damaged index as evidence", check="Move index.sqlite and its -wal/-shm of agent {agent} "
                "aside together (a stale -wal beside a new index would be replayed into it); other agents are untouched.",
                command="mkdir {damaged_dir} && mv -n {index}* {damaged_dir}/",
                verify="No index.sqlite left in the agent's QMD cache dir; the damaged copy is in {damaged_dir}.")
_REINDEX = S(title="Run the managed update", check="OpenClaw re-creates this agent's index from its notes (its "
             "collections are in index.yml); a vector mode then embeds again.",
             command="{openclaw} memory index --agent {agent}", verify="A new update time within the lease; unindexed "
             "files now indexed.", runnable=True)
for _tag, _what in (("index_corrupt", "is corrupt (SQLITE_CORRUPT: database disk image is malformed)"),
                    ("index_not_database", "is not a SQLite database (SQLITE_NOTADB)")):
    _add(Verdict.QMD_UNAVAILABLE, _tag, "Move agent {agent}'s damaged QMD index aside (keep it as evidence), then let "
         "OpenClaw index that agent again",
         "mkdir {damaged_dir} && mv -n {index}* {damaged_dir}/",
         f"The agent's QMD index {_what}: qmd cannot search it, and an update cannot repair it in place.",
         "Don't delete the damaged index (it is the evidence: keep the moved copy), don't touch other agents' "
         "indexes, and don't run qmd with hand-made XDG dirs.",
         [_MOVE_ASIDE, _REINDEX, _REPROBE])
_add(Verdict.QMD_UNAVAILABLE, "index_unreadable", "Give the gateway's user read/write access to agent {agent}'s QMD "
     "index (its mode or owner blocks qmd), then re-probe",
     "chmod u+rw {index}*",
     "qmd cannot open the agent's index (SQLITE_CANTOPEN/EACCES): mode and owner are in the evidence. `chmod u+rw` "
     "fixes a file the gateway's user owns; one another user owns (e.g. after running openclaw as root) must be "
     "chown'ed to the gateway's user instead.",
     "Don't delete or rebuild the index: it is intact, only its permissions are wrong.",
     [S(title="See mode and owner", check="The index and its -wal/-shm sidecars.", command="ls -ln {index_dir}",
        verify="The gateway's user owns them and can read and write them."),
      S(title="Fix the index permissions", check="chmod for the owner; chown to the gateway's user when another user "
        "owns them.", command="chmod u+rw {index}*", verify="A qmd store command with the agent's XDG dirs exits 0."),
      _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "index_locked", "Agent {agent}'s QMD index is locked by another process "
     "({lock_holder}): wait for that writer to finish, or stop it, then re-probe",
     "ps -o pid,etime,args -p {lock_pid}",
     "A writer holds the index (SQLITE_BUSY), so every search waits for the lock until the search timeout: the "
     "canary timed out, it was not missed.",
     "Don't raise the timeout or change the search mode for a lock, don't delete the -wal/-shm files, and don't "
     "rebuild: the index is fine once the writer lets go.",
     [S(title="Find the lock holder", check="The pid clawprobe saw holding the index (psutil open files, embed lock).",
        command="ps -o pid,etime,args -p {lock_pid}", verify="You know what the writer is (qmd update/embed, a "
        "second gateway, a script)."),
      S(title="Wait for it or stop it", check="A qmd update or embed ends by itself; a stuck or foreign writer is "
        "stopped (kill {lock_pid}).", verify="The holder is gone."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "timeout/search", "qmd's BM25 search ran past limits.timeoutMs: time `qmd search` "
     "directly with the agent's environment, then raise memory.qmd.limits.timeoutMs or remove what blocks it",
     "{agent_xdg} timeout 60 {qmd} search clawprobe --json -n 5",
     "BM25 `search` loads no model and normally answers in well under a second; a search that runs out the "
     "timeout points at a lock, a hung wrapper or an overloaded host, not at the search mode.",
     "The mode already is `search`: switching modes cannot help. " + _NO_REBUILD,
     [S(title="Time it directly", check="The agent's XDG dirs, at most 60 s.",
        command="{agent_xdg} timeout 60 {qmd} search clawprobe --json -n 5",
        verify="Answers quickly → a transient block or load; slow but answers → raise limits.timeoutMs; hangs → "
               "find what blocks it (a writer holding the index, a wrapper)."),
      S(title="Raise the timeout if it is only slow", check="memory.qmd.limits.timeoutMs above the measured time.",
        verify="Searches finish inside the deadline."), _REPROBE])
for _mode, _verb in (("vsearch", "vsearch"), ("query", "query")):
    _add(Verdict.RETRIEVAL_FAILED, f"timeout/{_mode}", f"The {_mode} search ran past limits.timeoutMs: warm the "
         "models up once with the agent's environment (the first vector query loads them), then re-probe; if it "
         "stays slow, raise limits.timeoutMs or use searchMode search",
         "{warmup}",
         f"`{_mode}` loads GGUF models (~2 GB with query expansion) on its first run, which can take longer than "
         "the search timeout; a warm run is much faster. If warm runs are slow too, the timeout or the mode must "
         "change.",
         "Don't call a slow first query a hang without stall evidence. " + _NO_REBUILD,
         [S(title="Warm up the models", check="One run with the agent's XDG dirs loads (and, if missing, fetches) the "
            "models this mode needs.", command="{warmup}", verify="It answers; a second run is fast."),
          _REPROBE,
          S(title="Or use BM25 search mode or a larger timeout", check="memory.qmd.searchMode or "
            "memory.qmd.limits.timeoutMs.", command="{openclaw} config set memory.qmd.searchMode search",
            verify="Searches finish inside the deadline.")])
_add(Verdict.FALLBACK_ACTIVE, "timeout/search", "QMD's BM25 search timed out and the gateway switched to builtin: "
     "find what slows qmd search (time it directly), raise limits.timeoutMs if it is only slow, then restart",
     "{agent_xdg} timeout 60 {qmd} search clawprobe --json -n 5",
     "A QMD search ran past limits.timeoutMs and OpenClaw served the builtin engine instead; the mode already is "
     "BM25 `search`.",
     "Don't disable the fallback, and don't switch modes: the mode already is `search`. " + _NO_REBUILD,
     [S(title="Time it directly", check="The agent's XDG dirs, at most 60 s.",
        command="{agent_xdg} timeout 60 {qmd} search clawprobe --json -n 5",
        verify="The latency is over limits.timeoutMs (or a lock/hang explains it)."),
      S(title="Restart the gateway", check="A runtime fallback stays until the manager is rebuilt.",
        command="{openclaw} gateway restart", verify="Results have the QMD shape."), _REPROBE])
_add(Verdict.RETRIEVAL_FAILED, "vector_miss", "BM25 finds the canary directly, the {mode} path does not: run the "
     "same {mode} query directly with the agent's environment to tell an OpenClaw fault from a vector fault",
     "{agent_xdg} {qmd} {mode} {token} --json -n 10",
     "The direct cross-check is BM25 `qmd search`: it proves the keyword index holds the canary, not that "
     "embeddings, models and the vector search answer.",
     "Don't conclude the index is fine from BM25 alone in a vector mode. " + _NO_REBUILD,
     [S(title="Run the vector path directly", check="The configured mode, the agent's XDG dirs.",
        command="{agent_xdg} {qmd} {mode} {token} --json -n 10",
        verify="Found → OpenClaw-side fault (upgrade OpenClaw); missing → its vectors (let the managed update embed "
               "again) or its models."), _REPROBE])
_add(Verdict.STALE_INDEX, "never_indexed", "Run the managed index once: this agent's QMD index has never been built",
     "{openclaw} memory index --agent {agent}",
     "There is no index.sqlite for the agent, so nothing on disk is searchable through QMD. clawprobe does not run "
     "the canary search meanwhile: OpenClaw would build the index on it, and that is your call.",
     "Don't run `qmd update`/`qmd status` by hand with other XDG dirs (a different index), and don't lengthen the lease.",
     [S(title="Check the gateway", check="A running gateway builds it at boot or on its interval; is it running with "
        "backend qmd?", command="{openclaw} memory status --agent {agent}", verify="Status names the QMD index path."),
      _INDEX, _REPROBE])
_add(Verdict.STALE_INDEX, "unreadable", "Make the unreadable memory file(s) readable by the gateway's user — qmd "
     "cannot index what it cannot read: {unreadable_list}",
     "chmod u+r {unreadable_files}",
     "qmd skips a file it cannot read (\"Skipped unreadable file … (EACCES)\") and keeps the old index row, so "
     "`memory index` succeeds and changes nothing: the verdict would never clear.",
     "Don't re-index or rebuild first: nothing changes until the files are readable. Don't make private notes "
     "world-readable (a+r): the gateway's user is enough.",
     [S(title="Make the files readable", check="chmod for the owner; chown to the gateway's user when another user owns "
        "them (mode and owner are in the evidence).", command="chmod u+r {unreadable_files}",
        verify="The files are readable by the gateway's user."),
      _INDEX, _REPROBE])


_add(Verdict.STALE_INDEX, "unreadable/builtin", "Make the unreadable memory file(s) readable by the gateway's user — "
     "OpenClaw cannot index what it cannot read: {unreadable_list}",
     "chmod u+r {unreadable_files}",
     "A memory file the index does not reflect cannot be read by this user, so no sync can index it.",
     "Don't re-index or rebuild first: nothing changes until the files are readable. Don't make private notes "
     "world-readable (a+r): the gateway's user is enough.",
     [S(title="Make the files readable", check="chmod for the owner; chown to the gateway's user when another user owns "
        "them (mode and owner are in the evidence).", command="chmod u+r {unreadable_files}",
        verify="The files are readable by the gateway's user."), _INDEX, _REPROBE])
_add(Verdict.QMD_UNAVAILABLE, "timeout", "qmd did not answer in time (evidence): run the same command by hand with "
     "the agent's environment to see where it hangs, then fix that and re-probe",
     "{agent_xdg} timeout 60 {qmd} ls",
     "clawprobe's `qmd --version` or `qmd ls` ran out of time: qmd starts but hangs (a wrapper waiting on "
     "something, a first-run build of its native parts, an overloaded host) — the gateway's qmd calls hang too.",
     "Don't pin another path or rebuild the index for a hang: find what qmd waits for first.",
     [S(title="Run it by hand", check="The agent's XDG dirs, at most 60 s.", command="{agent_xdg} timeout 60 {qmd} ls",
        verify="It answers within seconds (exit 0) — or you see where it stops."), _REPROBE])


def _q(path: str) -> str:
    """``path`` quoted for a POSIX shell (``shlex.quote``), a leading ``~/`` left bare so the shell expands it."""
    if path == "~":
        return path
    if path.startswith("~/"):
        return "~/" + shlex.quote(path[2:]) if path[2:] else "~/"
    return shlex.quote(path)


def _state_dir(r: Receipt, state_dir: str | None) -> str:
    """The state dir to name: the caller's, else the config file's dir when it is ``…/openclaw.json``
    (OpenClaw's default layout), else ``~/.openclaw``."""
    if state_dir:
        return state_dir
    cfg = r.config.path or ""
    return os.path.dirname(cfg) if os.path.basename(cfg) == "openclaw.json" and os.path.dirname(cfg) else "~/.openclaw"


def _fetch_models(r: Receipt, qmd_cmd: str, xdg: str) -> tuple[str | None, str, str]:
    """``(command, how, roles)`` that really fetches the models the configured mode lacks (source: qmd.md §3.2
    — ``embed`` loads the embed model, and only with documents to embed; ``vsearch`` generate + embed;
    ``query`` generate, embed and rerank, with ``--intent`` so a strong BM25 hit cannot skip expansion)."""
    mode = r.config.search_mode
    needed = MODELS_NEEDED.get(mode, ())
    missing = [m for m in needed if m in (r.vectors.missing_models or [])] or list(needed)
    to_embed = bool(r.vectors.pending) or r.vectors.has_vector_table is False
    if missing == ["embed"] and to_embed or mode == "search":
        return f"{xdg} {qmd_cmd} embed", "`qmd embed` (it loads the embed model for the pending documents)", "embed"
    verb: SearchMode = "query" if mode == "query" else "vsearch"
    extra = " --intent 'model warm-up'" if verb == "query" else ""
    cmd = f"{xdg} {qmd_cmd} {verb} 'clawprobe warm-up'{extra} -n 1"
    how = f"one warm-up `qmd {verb}` (it loads {', '.join(MODELS_NEEDED[verb])})"
    if "embed" in missing and to_embed:
        cmd = f"{xdg} {qmd_cmd} embed && {cmd}"
        how = "`qmd embed`, then " + how
    return cmd, how, ", ".join(missing)


#: what to write in a text (title, check, verify) when the receipt does not hold a value; a command that
#: needs one of these is not offered at all
_UNKNOWN = {
    "qmd_abs": "the absolute path of qmd (`command -v qmd` in a shell where qmd works)",
    "qmd_found": "none found on the gateway's PATH or the usual install dirs",
    "gateway_path_env": "the gateway's PATH (not measured)",
    "token": "the canary token (`clawprobe canary show`)",
    "canary_file": "the canary file's path",
    "lock_pid": "the holder's pid (not visible to this user: `fuser -v` the index as root)",
    "lock_holder": "holder not visible to this user",
    "unreadable_files": "the unreadable files (listed in the evidence)",
    "unreadable_list": "see the evidence",
    "warmup": "a warm-up query with the agent's XDG dirs",
}


def _context(r: Receipt, openclaw: str | None, state_dir: str | None) -> dict[str, str | None]:
    """The values commands are filled with, from the receipt (``None``: not known — see :data:`_UNKNOWN`).
    Paths are shell-quoted; ``openclaw`` is the caller's command line, used as given."""
    agent = r.agent_id
    state = _state_dir(r, state_dir)
    q = r.qmd
    found = (q.candidate_version, q.candidate_path) if q.candidate_path else None
    usable = q.resolved_path if (q.resolves or q.store_ok is not None) and q.failure != "not_qmd" else None
    qmd_abs = found[1] if found else (usable if usable and os.path.isabs(usable) else None)
    qmd_cmd = _q(q.resolved_path) if q.resolves and q.resolved_path else _q(qmd_abs or q.command or "qmd")
    home = f"{state.rstrip('/')}/agents/{agent}/qmd"
    xdg = (f"XDG_CONFIG_HOME={_q(home + '/xdg-config')} QMD_CONFIG_DIR={_q(home + '/xdg-config/qmd')} "
           f"XDG_CACHE_HOME={_q(home + '/xdg-cache')}")
    index_dir = f"{home}/xdg-cache/qmd"
    workspace = r.config.workspace or "~/.openclaw/workspace"
    canary_file = f"{workspace.rstrip('/')}/{r.canary.expected_path}" if r.canary.expected_path else None
    token = f'"$(grep -om1 \'{TOKEN_PREFIX}[A-Z2-7]*\' {_q(canary_file)})"' if canary_file else None
    holders = q.lock_holders if q.failure == "index_locked" else []
    sidecar = _reindex_holder(r) if r.config.configured_backend != "qmd" else None
    if sidecar is not None:
        holders = [LockHolder(pid=sidecar.pid, what=sidecar.command)]
    unreadable = r.freshness.unreadable_files[:5]
    fetch, fetch_how, missing = _fetch_models(r, qmd_cmd, xdg)
    mode = r.config.search_mode
    return {
        "agent": agent, "openclaw": openclaw or "openclaw", "qmd": qmd_cmd,
        "qmd_abs": _q(qmd_abs) if qmd_abs else None,  # never the path just measured missing or not qmd
        "qmd_found": f"qmd {found[0]} at {found[1]}" if found else None,
        "config": _q(r.config.path or "~/.openclaw/openclaw.json"), "state": _q(state), "agent_xdg": xdg,
        "gateway_path_env": f"PATH={_q(':'.join(r.gateway.path_dirs))}" if r.gateway.path_dirs else None,
        "workspace": _q(workspace), "log_glob": _log_file(r),
        "canary_file": _q(canary_file) if canary_file else None, "token": token,
        "index": _q(f"{index_dir}/index.sqlite"), "index_dir": _q(index_dir),
        "damaged_dir": _q(f"{index_dir}/damaged-{r.checked_at.strftime('%Y%m%dT%H%M%SZ')}"),
        "lock_pid": str(holders[0].pid) if holders else None,
        "lock_holder": f"pid {holders[0].pid} ({holders[0].what})" if holders else None,
        "unreadable_files": " ".join(_q(f"{workspace.rstrip('/')}/{p}") for p in unreadable) or None,
        "unreadable_list": ", ".join(unreadable) or None,
        "mode": mode, "warmup": fetch if mode != "search" else None, "fetch_models": fetch,
        "fetch_how": fetch_how, "missing_models": missing,
        "provider_key": _provider_key(r), "provider_key_parent": _provider_key(r).rsplit(".", 1)[0],
    }


def _log_file(r: Receipt) -> str:
    """The gateway log the evidence came from (an evidence source ``/path/file.log:LINE``), else OpenClaw's
    default rolling log ``/tmp/openclaw/openclaw-*.log`` (a configured ``logging.file`` wins when seen)."""
    for ev in r.backend.evidence:
        m = re.match(r"(/.+?\.(?:log|jsonl))(?::\d+)?$", ev.source or "")
        if m:
            return shlex.quote(m.group(1))
    return "/tmp/openclaw/openclaw-*.log"


def _provider_key(r: Receipt) -> str:
    """Where this build reads the embedding provider: ``memory.search.provider`` from 2026.8 (no QMD
    backend), ``agents.defaults.memorySearch.provider`` before (2026.7.35 verified)."""
    return "memory.search.provider" if r.openclaw.has_qmd_backend is False else "agents.defaults.memorySearch.provider"


_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@overload
def _fill(text: str, ctx: dict[str, str | None], *, command: Literal[False] = False) -> str: ...
@overload
def _fill(text: str | None, ctx: dict[str, str | None], *, command: bool = False) -> str | None: ...
def _fill(text: str | None, ctx: dict[str, str | None], *, command: bool = False) -> str | None:
    """``text`` with its ``{key}`` placeholders filled from ``ctx``. For a command, any unknown value makes
    the whole command ``None`` (never offered half-filled); in prose an unknown value is described
    (:data:`_UNKNOWN`). Unknown keys are left as they are (a literal brace in a command is not a key)."""
    if text is None:
        return None
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        key = m[1]
        if key not in ctx:
            return m[0]
        v = ctx[key]
        if v is None:
            missing = True
            return _UNKNOWN.get(key, key.replace("_", " "))
        return v

    out = _PLACEHOLDER.sub(sub, text)
    return None if command and missing else out


def _needs(text: str | None, ctx: dict[str, str | None]) -> list[str]:
    """What a command template needs that the receipt does not hold (descriptions)."""
    return [_UNKNOWN.get(k, k) for k in dict.fromkeys(_PLACEHOLDER.findall(text or "")) if k in ctx and ctx[k] is None]


def lookup(verdict: Verdict, reason: str | None) -> RepairAction:
    """The catalog entry for (verdict, reason), falling back to the verdict's general entry."""
    return _CATALOG.get((verdict, reason)) or _CATALOG[(verdict, None)]


def _measured_cause(verdict: Verdict, reason: str | None, r: Receipt) -> str | None:
    """A cause the receipt measured that makes the tag's usual command useless (causes before commands):
    ``model_missing`` — embeds killed at their timeout while the embed model is not in the cache (a longer
    timeout cannot finish an embed that has no model, or hangs); ``wrong_package`` — the configured command is
    the npm package ``qmd``, not ``@tobilu/qmd``; ``not_installed`` — no working qmd anywhere clawprobe looked
    (gateway PATH, the qmd child's PATH, the usual install dirs): "put it on PATH" cannot work."""
    if verdict == Verdict.VECTOR_NOT_READY and reason == "embed_timeout" and "embed" in (r.vectors.missing_models or []):
        return "model_missing"
    lock = r.builtin.gates.reindex_lock
    if verdict == Verdict.STALE_INDEX and reason == "reindex_locked" and lock is not None and lock.visible:
        holder = _reindex_holder(r)
        if holder is not None and not holder.gateway:
            return "holder_other"
        if lock.exists and not lock.holders:
            return "no_holder"
    q = r.qmd
    if verdict == Verdict.QMD_UNAVAILABLE and reason == "not_qmd" and q.package == "qmd":
        return "wrong_package"
    if verdict == Verdict.QMD_UNAVAILABLE and reason in ("not_on_path", "command_missing", "not_executable", "not_qmd") \
            and q.candidate_searched and not q.candidate_path:
        return "not_installed"
    return None


def _reindex_holder(r: Receipt) -> SidecarHolder | None:
    """The process holding the builtin reindex-lock sidecar: the write-lock holder first, else any process
    that has it open (source: ``receipt.builtin.gates.reindex_lock``)."""
    lock = r.builtin.gates.reindex_lock
    if lock is None or not lock.holders:
        return None
    return next((h for h in lock.holders if h.write_lock), lock.holders[0])


def _variant(verdict: Verdict, reason: str | None, r: Receipt) -> RepairAction:
    """The catalog entry: ``reason/<measured cause>`` (:func:`_measured_cause`), ``reason/<mode>`` (QMD only),
    then ``reason/<engine>``, then ``reason``, then the verdict's general entry (a retrieval failure without a
    tag is a ``miss``)."""
    engine_reason = "miss" if reason is None and verdict == Verdict.RETRIEVAL_FAILED else reason  # the rule's default tag
    keys = [f"{engine_reason}/{r.config.configured_backend}"]
    cause = _measured_cause(verdict, reason, r)
    if cause:
        keys.insert(0, f"{reason}/{cause}")
    if r.config.configured_backend == "qmd":
        keys.insert(0, f"{reason}/{r.config.search_mode}")
    for k in keys:
        if (verdict, k) in _CATALOG:
            return _CATALOG[(verdict, k)]
    return lookup(verdict, reason)


def repair_for(verdict: Verdict, reason: str | None, r: Receipt, *, openclaw: str | None = None,
               state_dir: str | None = None) -> RepairAction:
    """The next action for a diagnosis, with commands filled in for this agent and install.

    ``openclaw`` is the OpenClaw command line to show (default ``openclaw``); ``state_dir`` the state dir
    (default: the config file's dir, else ``~/.openclaw``). Variants by search mode and engine win (see the
    module doc). A command needing a value the receipt does not hold comes back ``None`` — and a runnable
    step stops being runnable — with what to fill in appended to its text. Never raises for a known verdict.
    """
    base = _variant(verdict, reason, r)
    ctx = _context(r, openclaw, state_dir)
    steps = []
    for st in base.steps:
        cmd = _fill(st.command, ctx, command=True)
        need = _needs(st.command, ctx)
        check = _fill(st.check, ctx) + (f" (Not offered to copy: it needs {'; '.join(need)}.)" if need else "")
        steps.append(st.model_copy(update={"command": cmd, "check": check, "verify": _fill(st.verify, ctx),
                                           "title": _fill(st.title, ctx), "runnable": st.runnable and cmd is not None}))
    need = _needs(base.command, ctx)
    why = _fill(base.why, ctx) + (f" The command is not offered: it needs {'; '.join(need)}." if need else "")
    return base.model_copy(update={"reason": reason, "command": _fill(base.command, ctx, command=True), "steps": steps,
                                   "title": _fill(base.title, ctx), "why": why, "dont": _fill(base.dont, ctx)})


def catalog() -> dict[tuple[Verdict, str | None], RepairAction]:
    """A copy of the whole catalog (for docs and tests)."""
    return dict(_CATALOG)
