"""The repair catalog: for each verdict (and sub-reason) one next action and an ordered walkthrough.

Principles (spec §6): one narrow next action per verdict; rebuilding every index is never the default
(it destroys the evidence that tells a path fault from a freshness fault); never disable the fallback to
make a checker red; never run ``qmd`` by hand with arbitrary XDG dirs. The entries are data —
``catalog/<verdict>.toml`` in this package, each read when first needed and validated by
:mod:`clawprobe.core.repair_catalog` — and
their command templates are filled for the agent and install at hand by :func:`repair_for` through
:mod:`clawprobe.core.repair_context` (a command needing a value the receipt does not hold is not offered).
Variants: an entry keyed ``reason/qmd`` or ``reason/builtin`` wins for that engine, ``reason/search`` /
``reason/vsearch`` / ``reason/query`` for that QMD search mode (mode first), ``reason/<cause>`` for a cause
the receipt measured (:func:`_measured_cause`).
"""

from __future__ import annotations

import re

from clawprobe.core.modes import models_cell
from clawprobe.core.receipt import Receipt
from clawprobe.core.repair_catalog import CatalogKey, load_catalog, load_verdict
from clawprobe.core.repair_context import context, fill, needs, reindex_holder
from clawprobe.core.repair_models import RepairAction, RepairStep
from clawprobe.core.rules import newer_layout
from clawprobe.core.shell import words_after_first
from clawprobe.core.state_faults import INDEX_MOUNT_FAULT, VOLUME_FULL_FAULT
from clawprobe.core.verdicts import Verdict

__all__ = ["RepairAction", "RepairStep", "catalog", "lookup", "repair_for"]

def lookup(verdict: Verdict, reason: str | None) -> RepairAction:
    """The catalog entry for (verdict, reason), falling back to the verdict's general entry."""
    entries = load_verdict(verdict)
    return entries.get((verdict, reason)) or entries[(verdict, None)]


#: OpenClaw's own words for a pinned provider with no API key at all (2026.9.6 measured: "No API key found for
#: provider "openai" … | missing-provider-auth"); a key the provider refuses (401) is another fault
_NO_KEY = re.compile(r"^provider_auth: .*(No API key found for provider|missing-provider-auth)")
#: vector-not-ready reasons whose usual command is an embed that cannot run without the embed model (an
#: interrupted embed did load it: its own repair, a longer embed timeout, stands)
MODEL_BOUND = frozenset({"embed_timeout", "fingerprint_mismatch", "pending", "no_vector_store"})
#: builtin store damage OpenClaw's own rebuild cannot get past: it opens the old file first (`memory index --force`
#: and `doctor --fix` failed "malformed" on a truncated 2026.9.6 store, breaker round 5)
UNREBUILDABLE = frozenset({"truncated", "not_sqlite"})


def _measured_cause(verdict: Verdict, reason: str | None, r: Receipt) -> str | None:
    """A cause the receipt measured that makes the tag's usual command useless (causes before commands):
    ``model_missing`` — vectors not ready while the embed model is not in the cache (a longer timeout or an
    index run cannot finish an embed that has no model: offline it hangs; measured: a switched embed model's
    ``memory index`` killed at 100 s) — the model's fetch comes first; ``wrong_package`` — the configured command is
    the npm package ``qmd``, not ``@tobilu/qmd``; ``not_installed`` — no working qmd anywhere clawprobe looked
    (gateway PATH, the qmd child's PATH, the usual install dirs): "put it on PATH" cannot work; ``holder_other`` —
    the builtin reindex lock is held by a process that is not the gateway (stop that one); ``no_holder`` — nobody
    holds it any more (``memory status --fix``, not a gateway stop); ``command_line`` — ``memory.qmd.command`` is a
    command line whose later word is a working qmd (OpenClaw runs only the first word); ``spaced_path`` — it is an
    unquoted path with a blank that, taken whole, is a working qmd (catalog key ``*/spaced_path``: whatever the
    first word's failure was); ``newer_layout`` — the
    config holds a 2026.8+ key an older build rejects (a rollback: its doctor cannot fix it); ``newer_state`` — and the
    state database was written by that newer release, so moving the keys cannot help (breaker round 9, p09); ``index_mount`` — the
    state fault is the QMD index dir's read-only mount, not the state dir's; ``store_full`` / ``index_full`` — it is
    the full volume of the agent's store dir / QMD index dir, the state dir's has room; ``qmd_major`` — the retrieval failure is
    served by a qmd 1.x (OpenClaw 2026.7's qmd is 2.x: 1.1.6 does not match the canary's hyphenated token and
    indexes MEMORY.md as ``memory.md``, breaker round 7, w15); ``other_owner`` — an unreadable memory file is
    another user's (this user's chmod cannot change it); ``unrebuildable`` — the builtin store is cut
    short or no SQLite file (:data:`UNREBUILDABLE`): moved aside, not rebuilt in place; ``bad_name`` — every skipped
    note is skipped for a file name that is not UTF-8 (listed and renamed by their bytes, not by find's rules);
    ``no_auto_update`` — the index is behind a QMD config that schedules no update (interval 0, watcher off): waiting
    never helps (catalog key ``*/no_auto_update``); ``update_blocked`` — a process that is not qmd or OpenClaw holds
    the QMD index's write lock, so the index run would wait on it (``*/update_blocked``); ``workspace_missing`` /
    ``notes_nearby`` — no canary, and the agent's workspace does not exist (a plant refuses it), with the operator's
    notes in an ancestor for the latter (breaker round 9, p13: ``agents.defaults.workspace`` holds them, OpenClaw
    looks in ``<it>/<id>``); ``notes_other_home`` — the same (or the workspace gone from under its index), and the
    notes sit where this shell's HOME puts the workspace: the gateway runs with another HOME (breaker round 21, #2);
    ``local_plugin`` — the pinned ``local`` provider is unknown to this build: OpenClaw
    2026.6.2+ ships it as the llama.cpp provider plugin, and no ``local.modelPath`` helps before it is installed
    (breaker round 12, s15); ``linked_root`` — a builtin ``extraPaths`` root is a symlink, which the engine never
    traverses: the real directory goes in its place (s05; no note needs moving); ``rename_clash`` — a skipped note's
    searchable name is taken (``memory.md`` beside ``MEMORY.md``): the two are merged, a rename would overwrite the
    indexed one (breaker round 24); ``glob_root`` — a builtin ``extraPaths`` entry is a wildcard (``notes/*.md``)
    matching notes: neither build expands it, its directory goes in its place (breaker round 24); ``entry_disabled`` / ``denied`` —
    the memory plugin is off by its ``plugins.entries.<id>.enabled = false`` / by ``plugins.deny`` naming it, not by
    an empty slot: filling the slot changes nothing (tester's repro-5), the entry or the deny list is what to edit;
    ``not_allowed`` — a ``plugins.allow`` list leaves the memory plugin out (the repair adds it); ``no_key`` —
    2026.8+, the pinned provider's error is OpenClaw's "No API key found for provider" (``provider_auth``): its own
    ``models auth paste-api-key --agent`` stores one for that agent (2026.7.35's has no ``--agent``: not offered,
    breaker round 25)."""
    if (cause := _timeout_models(verdict, reason, r)) is not None:
        return cause
    if verdict == Verdict.MEMORY_UNAVAILABLE and reason == "plugin_off":
        off = r.config.memory_off or ""
        if off.startswith("plugins.entries."):
            return "entry_disabled"  # the slot names the plugin; its entry is switched off
        if off.startswith("plugins.deny"):
            return "denied"  # the slot names the plugin; plugins.deny blocks it
        if off.startswith("plugins.allow"):
            return "not_allowed"  # a plugins.allow list leaves it out: the agent gets no memory tool
    if verdict == Verdict.MEMORY_UNAVAILABLE and reason == "explicit_provider" and r.openclaw.has_qmd_backend is False \
            and r.config.provider and _NO_KEY.search(r.builtin.gates.provider_error or ""):
        return "no_key"  # OpenClaw finds no API key for the pinned provider: its own command stores one per agent
    if reason == "local_model" and (r.builtin.gates.provider_error or "").startswith("local_plugin:"):
        return "local_plugin"
    if verdict == Verdict.RETRIEVAL_FAILED and reason == "unsearchable_notes" and r.coverage.linked_roots:
        return "linked_root"
    if verdict == Verdict.RETRIEVAL_FAILED and reason == "unsearchable_notes" and r.coverage.rename_clashes:
        return "rename_clash"  # memory.md beside MEMORY.md: the rename would overwrite the indexed note
    if verdict == Verdict.RETRIEVAL_FAILED and reason == "unsearchable_notes" and r.coverage.glob_roots:
        return "glob_root"  # an extraPaths wildcard: OpenClaw reads it as a literal path that does not exist
    if verdict == Verdict.VECTOR_NOT_READY and reason in MODEL_BOUND and "embed" in (r.vectors.missing_models or []):
        return "model_missing"  # every embed (an index run's too) needs that model: offline it hangs
    lock = r.builtin.gates.reindex_lock
    if verdict == Verdict.STALE_INDEX and reason == "reindex_locked" and lock is not None and lock.visible:
        holder = reindex_holder(r)
        if holder is not None and not holder.gateway:
            return "holder_other"
        if lock.exists and not lock.holders:
            return "no_holder"
    if verdict == Verdict.MEMORY_UNAVAILABLE and reason == "state_unwritable" and (
            r.openclaw.state_fault or "").startswith(INDEX_MOUNT_FAULT):
        return "index_mount"
    if verdict == Verdict.MEMORY_UNAVAILABLE and reason == "state_unwritable":
        full = next((k for k, prefix in VOLUME_FULL_FAULT.items() if (r.openclaw.state_fault or "").startswith(prefix)),
                    None)
        if full is not None:
            return f"{full}_full"
    if verdict == Verdict.STALE_INDEX and r.freshness.write_holder is not None:
        return "update_blocked"
    if verdict == Verdict.STALE_INDEX and r.freshness.update_timeout and reason != "unreadable" and (
            r.freshness.unindexed_count or r.freshness.ghost_count):
        return "update_timeout"
    if verdict == Verdict.STALE_INDEX and r.config.no_auto_update and reason != "unreadable" and (
            r.freshness.unindexed_count or r.freshness.ghost_count):
        return "no_auto_update"
    if verdict == Verdict.STALE_INDEX and reason == "unreadable" and r.freshness.unreadable_foreign:
        return "other_owner"
    if verdict == Verdict.CONFIG_INVALID and reason == "schema" and newer_layout(r) and r.openclaw.state_written_by:
        return "newer_state"
    if verdict == Verdict.CONFIG_INVALID and reason == "schema" and newer_layout(r):
        return "newer_layout"
    if verdict == Verdict.MEMORY_UNAVAILABLE and reason == "index_corrupt" and r.builtin.store_damage in UNREBUILDABLE:
        return "unrebuildable"
    if verdict == Verdict.MEMORY_UNAVAILABLE and reason == "index_unreadable" and r.builtin.store_damage == "directory":
        return "directory"
    if verdict == Verdict.MEMORY_UNAVAILABLE and reason == "index_unreadable" and r.builtin.store_damage == "not_regular":
        return "not_regular"
    skips = {k for c in r.coverage.sources for k in c.skipped}
    if verdict == Verdict.RETRIEVAL_FAILED and reason == "unsearchable_notes" and skips == {"bad_name"}:
        return "bad_name"  # names that are not UTF-8: the generic find cannot list them
    if verdict == Verdict.RETRIEVAL_FAILED and reason == "unsearchable_notes" and skips == {"glob_path"}:
        return "glob_path"  # a configured path holding a glob: the config, not the notes, is the fault
    if (verdict == Verdict.UNVERIFIED and reason in ("no_canary", "never_indexed")
            or verdict == Verdict.MEMORY_UNAVAILABLE and reason == "workspace_missing") \
            and r.coverage.workspace == "missing" and r.coverage.notes_nearby \
            and any(f.tag == "workspace_other_home" for f in r.findings):
        return "notes_other_home"  # the gateway's HOME gives another workspace than the operator's (brk21 #2)
    if verdict == Verdict.UNVERIFIED and reason in ("no_canary", "never_indexed") and r.coverage.workspace == "missing":
        return "notes_nearby" if r.coverage.notes_nearby else "workspace_missing"  # a plant refuses a missing workspace
    if verdict == Verdict.UNVERIFIED and reason == "no_canary" and any(f.tag == "memory_not_dir" for f in r.findings):
        return "memory_not_dir"  # a canary plant refuses a memory/ that is a file
    q = r.qmd
    if verdict == Verdict.RETRIEVAL_FAILED and r.config.configured_backend == "qmd" and _major(q.version) == 1:
        return "qmd_major"
    if verdict == Verdict.QMD_UNAVAILABLE and reason == "not_qmd" and q.package == "qmd":
        return "wrong_package"
    if verdict == Verdict.QMD_UNAVAILABLE and q.candidate_path and q.candidate_path == (q.command or "").strip():
        return "spaced_path"  # "/opt/My Tools/qmd" unquoted: OpenClaw runs "/opt/My"; the whole path is a working qmd
    if verdict == Verdict.QMD_UNAVAILABLE and q.candidate_path and q.candidate_path in words_after_first(q.command or ""):
        return "command_line"  # "node /…/qmd": OpenClaw runs the first word alone; the qmd it names works
    if verdict == Verdict.QMD_UNAVAILABLE and reason in ("not_on_path", "command_missing", "not_executable", "not_qmd") \
            and q.candidate_searched and not q.candidate_path:
        return "not_installed"
    return None


#: the causes that come before a search mode's own variant: a timeout in a model-backed mode whose models are not
#: there is the missing models, whatever the mode's usual advice (a mode switch or a longer timeout) says
MODEL_CAUSES = frozenset({"model_missing", "download_stalled"})


def _timeout_models(verdict: Verdict, reason: str | None, r: Receipt) -> str | None:
    """A QMD search that timed out and made the gateway fall back, in a mode that loads models
    while a model the mode needs is not in the cache (``models_cell`` fails): the search waits on a first-run
    download, so the cause is the missing models — ``download_stalled`` when the running download has stalled
    (its process holds qmd's embed lock: stop it first), else ``model_missing`` (fetch them). A longer timeout or
    another mode is no repair for that (spec §10; breaker round 21, finding 5: query mode offline, "use BM25 search
    mode or a larger timeout" while the models pane showed the download stuck). Without a fallback the same state is
    ``vector_not_ready`` (it comes first), whose repairs already fetch the models."""
    if verdict != Verdict.FALLBACK_ACTIVE or reason != "timeout":
        return None
    mode = r.config.search_mode
    if r.config.configured_backend != "qmd" or mode == "search" or models_cell(r, mode).state != "fail":
        return None
    return "download_stalled" if r.vectors.download_status == "stalled" and r.vectors.embed_running_pid \
        else "model_missing"


def _major(version: str | None) -> int | None:
    """The major number of a ``qmd --version`` answer (``"1.1.6"`` → 1); ``None`` when there is none."""
    head = (version or "").strip().split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _variant(verdict: Verdict, reason: str | None, r: Receipt) -> RepairAction:
    """The catalog entry: ``reason/<measured cause>`` (:func:`_measured_cause`), ``reason/<mode>`` (QMD only),
    then ``reason/<engine>``, then ``reason``, then the verdict's general entry (a retrieval failure without a
    tag, or with a tag the catalog has no entry for, is the engine's ``miss``)."""
    engine_reason = "miss" if reason is None and verdict == Verdict.RETRIEVAL_FAILED else reason  # the rule's default tag
    keys = [f"{engine_reason}/{r.config.configured_backend}"]
    cause = _measured_cause(verdict, reason, r)
    if cause:
        keys[:0] = [f"{reason}/{cause}", f"*/{cause}"] + (["model_download"] if cause == "model_missing" else [])
    if r.config.configured_backend == "qmd":
        at = 2 if cause in MODEL_CAUSES else 0  # a measured missing model before the mode's own advice
        keys.insert(at, f"{reason}/{r.config.search_mode}")
    entries = load_verdict(verdict)
    if verdict == Verdict.RETRIEVAL_FAILED and (verdict, reason) not in entries:
        keys.append(f"miss/{r.config.configured_backend}")  # a tag with no entry of its own: the engine's miss
    for k in keys:
        if (verdict, k) in entries:
            return entries[(verdict, k)]
    return lookup(verdict, reason)


def repair_for(verdict: Verdict, reason: str | None, r: Receipt, *, openclaw: str | None = None,
               state_dir: str | None = None, clawprobe: str | None = None) -> RepairAction:
    """The next action for a diagnosis, with commands filled in for this agent and install.

    ``openclaw`` is the OpenClaw command line to show (default ``openclaw``), ``clawprobe`` clawprobe's
    (default ``clawprobe``) — both as :func:`clawprobe.core.locate.command_lines` makes them, so the commands
    reach the probed install; ``state_dir`` the state dir (default: the config file's dir, else ``~/.openclaw``).
    Variants by search mode and engine win (see the module doc). A command needing a value the receipt does not
    hold comes back ``None`` — and a runnable step stops being runnable — with what to fill in appended to its
    text. Never raises for a known verdict.
    """
    base = _variant(verdict, reason, r)
    ctx = context(r, openclaw, state_dir, clawprobe)
    steps = []
    for st in base.steps:
        cmd = fill(st.command, ctx, command=True)
        need = needs(st.command, ctx)
        check = fill(st.check, ctx) + (f" (Not offered to copy: it needs {'; '.join(need)}.)" if need else "")
        steps.append(st.model_copy(update={"command": cmd, "check": check, "verify": fill(st.verify, ctx),
                                           "title": fill(st.title, ctx), "runnable": st.runnable and cmd is not None}))
    need = needs(base.command, ctx)
    why = fill(base.why, ctx) + (f" The command is not offered: it needs {'; '.join(need)}." if need else "")
    return base.model_copy(update={"reason": reason, "command": fill(base.command, ctx, command=True), "steps": steps,
                                   "title": fill(base.title, ctx), "why": why, "dont": fill(base.dont, ctx)})


def catalog() -> dict[CatalogKey, RepairAction]:
    """A copy of the whole catalog (for docs and tests)."""
    return load_catalog()
