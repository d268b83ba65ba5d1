"""Where the live dashboard's receipts come from: a thin adapter over ``clawprobe.core.probe`` (and ``clawprobe.core.canary``,
``clawprobe.core.history``) so the App never imports probe internals and every call has one place to fail cleanly.

All methods here block (subprocesses, SQLite, files): the App calls them from thread workers only.
"""

from __future__ import annotations

import importlib
import os
import shlex
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from clawprobe.core.receipt import Receipt
from clawprobe.tui import first_look

#: why nothing was located: the first look was stopped by a Ctrl-C (see :meth:`LiveSource.discover`)
INTERRUPTED = "locating the install was interrupted (Ctrl-C); r starts it again"


class SourceUnavailable(Exception):
    """A core module the live dashboard needs is missing or broken; ``str()`` says which."""


def _core(name: str) -> Any:
    try:
        return importlib.import_module(f"clawprobe.core.{name}")
    except ImportError as exc:
        raise SourceUnavailable(f"core.{name} is not available ({exc})") from None


class LiveSource:
    """The local OpenClaw install, located like OpenClaw does (``clawprobe.core.probe.discover``).

    ``installed`` is False (with ``reason``) when no install was found — the dashboard still opens and
    says so. ``agent_ids`` lists the agents (``--agent`` narrows it to one). ``refused`` is why ``--agent``
    names no agent the discovered OpenClaw knows (``clawprobe.core.probe.refused``: a removed agent's left-over
    dir on 2026.8+), as ``check`` refuses it — the dashboard then leaves with that line, exit 3.
    """

    def __init__(self, *, state_dir: str | None = None, config: str | None = None, agent: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self._state_dir, self._config, self._agent, self._env = state_dir, config, agent, env
        self._ctx: Any = None
        self._look: first_look.FirstLook | None = None  # the forked child's first look, until the next discovery
        self._child: first_look.Child | None = None  # forked, not yet collected (close() cancels it)
        self._look_lock = threading.Lock()
        self._closed = False
        self.installed = False
        self.reason: str | None = None
        self.refused: str | None = None
        self.agent_ids: list[str] = [agent] if agent else ["main"]
        self._scan_caches: dict[str, Any] = {}  # agent -> clawprobe.core.probes.workspace_cache.WorkspaceCache
        self._holds: dict[str, Any] = {}  # agent -> clawprobe.core.interpret.coverage.BeforeHold of its last CLI probe
        self._watched: list[str] | None = None
        self._caches_lock = threading.Lock()
        self._ctx_lock = threading.Lock()
        self._config_seen: tuple = ()
        self._slow_seen: dict[str, tuple] = {}  # agent → the config files its last CLI answers were taken under
        self._slow_started: dict[str, tuple] = {}  # agent → the config files on disk when its CLI lane last started
        self._prefetch: threading.Thread | None = None

    @property
    def ctx(self) -> Any:
        """The ``clawprobe.core.probe.ProbeContext`` of the last discovery (``None`` before one); after a
        :meth:`prefetch` by a child process it is unpickled here on first use (importing the probes)."""
        look = self._look
        if self._ctx is None and look is not None:
            with self._look_lock:
                if self._ctx is None:
                    self._ctx = look.context()
        return self._ctx

    @ctx.setter
    def ctx(self, value: Any) -> None:
        self._ctx, self._look = value, None

    def check_command(self) -> str:
        """The plain-text ``check`` of what this source probes (its ``--state-dir``/``--config``/``--agent``)."""
        from clawprobe.tui.too_small import check_command

        return check_command(state_dir=self._state_dir, config=self._config, agent=self._agent)

    def prefetch(self) -> None:
        """Start :meth:`discover` and the first fast probe of every agent now, before the toolkit is imported: in
        a forked child (``clawprobe.tui.first_look``) while no thread runs yet, so the probes' imports, the
        ``openclaw --version`` Node start and the first probes run on another core; else in a background
        thread. The App's own :meth:`discover` waits for it and uses its result once."""
        if self._prefetch is not None or self._child is not None:
            return
        if threading.active_count() == 1:
            self._child = first_look.fork(self._first_look)
            if self._child is not None:
                return
        self._prefetch = threading.Thread(target=self._discover_now, name="clawprobe-discover", daemon=True)
        self._prefetch.start()

    def _first_look(self) -> first_look.FirstLook:
        """(In the forked child.) Discover, then the fast lane of every agent with no qmd process."""
        import pickle

        now = datetime.now(UTC)
        self._discover_now()
        receipts = {a: self.fast(a, None, now, qmd_check=False) for a in self.agent_ids} if self.installed else {}
        return first_look.FirstLook(
            installed=self.installed, reason=self.reason, agent_ids=list(self.agent_ids), receipts=receipts,
            lines=self.command_lines(), openclaw_path=self.openclaw_path(), state_dir=self.state_dir(),
            config_seen=self._config_seen, taken_at=now, ctx_blob=pickle.dumps(self.ctx), refused=self.refused)

    def discover(self) -> None:
        """Locate the install (``clawprobe.core.probe.discover``: never raises for a missing install); a
        :meth:`prefetch` in flight or done is waited for and used instead, once. A first-look child stopped by
        SIGINT is not taken over: the Ctrl-C went to the terminal's whole foreground group, so the dashboard
        is leaving too (nothing is located; ``reason`` says so and ``r`` starts over)."""
        pre, self._prefetch = self._prefetch, None
        if pre is not None:
            pre.join()
            return
        child = self._child
        look = child.collect() if child is not None else None
        self._child = None
        if look is None:
            if child is not None and child.interrupted:  # Ctrl-C reached the child's process group, so this
                self.reason = INTERRUPTED  # dashboard too, which is leaving: no new `openclaw --version` now
            elif not self._closed:  # (a dashboard that is leaving does not start over)
                self._discover_now()
            return
        self._ctx, self._look, self._config_seen = None, look, look.config_seen
        self.installed, self.reason, self.agent_ids = look.installed, look.reason, look.agent_ids  # (--agent applied)
        self.refused = look.refused

    def prefetched(self) -> bool:
        """Whether :meth:`discover` would return at once: a child's first look has arrived (a thread's
        :meth:`prefetch` or none at all: False)."""
        return self._child is not None and self._child.arrived()

    def close(self) -> None:
        """The dashboard is leaving: a child's first look still in flight is killed and reaped."""
        self._closed = True
        child, self._child = self._child, None
        if child is not None:
            child.cancel()

    def first_receipts(self) -> dict[str, Receipt]:
        """The first fast receipt of each agent a child's :meth:`prefetch` took (``{}`` otherwise); once."""
        look = self._look
        if look is None:
            return {}
        out, look.receipts = look.receipts, {}
        return out

    def _discover_now(self) -> None:
        try:
            probe = _core("probe")
            self.ctx = probe.discover(state_dir=self._state_dir, config=self._config, env=self._env)
        except SourceUnavailable as exc:
            self.ctx, self.installed, self.reason = None, False, str(exc)
            return
        self._config_seen = self._config_files()
        self.installed = bool(getattr(self.ctx, "installed", False))
        self.reason = getattr(self.ctx, "reason", None)
        found = list(getattr(self.ctx, "agent_ids", None) or getattr(self.ctx, "agents", None) or [])
        self.refused = probe.refused(self.ctx, self._agent) if self.installed else None
        if self.refused:
            self.agent_ids = []
        elif self._agent:
            self.agent_ids = [self._agent]
        elif found:
            self.agent_ids = [str(a) for a in found]

    def _config_files(self) -> tuple:
        """(path, exists, mtime_ns, size, inode) of the config file and every ``$include`` the context read."""
        snap = getattr(self.ctx, "config", None)
        out = []
        for path in dict.fromkeys([getattr(snap, "path", None) or "", *getattr(snap, "files", [])]):
            try:
                st = os.stat(path)
                out.append((path, True, st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append((path, False, 0, 0, 0))
        return tuple(out)

    def reread_config(self) -> bool:
        """Locate the install again when the config file or one of its ``$include``s changed since the last
        :meth:`discover` (the fast lane reads the config from the context: without this, a re-probe after an
        edit would judge the config as it was at start). ``openclaw --version`` is cached per binary, so this
        costs a config read and the gateway check. True when it re-read."""
        if self.ctx is None:
            return False
        with self._ctx_lock:
            if self._config_files() == self._config_seen:
                return False
            self.discover()
            return True

    def fast(self, agent_id: str, slow: Any, now: datetime, *, qmd_check: bool = True) -> Receipt:
        """``clawprobe.core.probe.fast``: everything but the ``openclaw`` CLI (≤ 80 ms target), with the accepted
        memory-config baseline (``clawprobe.core.history.load_baseline``) so a change since shows as config drift.
        The config is re-read first when it changed on disk (:meth:`reread_config`). ``qmd_check=False``: no
        qmd process runs (the qmd lane, :meth:`check_qmd`, has not finished yet). While the measurement taken
        before :meth:`slow`'s CLI probes still holds (``clawprobe.core.interpret.coverage.BeforeHold``: the probe
        synced the index and nothing changed since) freshness is judged from it, as ``clawprobe check`` does."""
        self.reread_config()
        if slow is not None and self._slow_seen.get(agent_id, self._config_seen) != self._config_seen:
            slow = None  # the CLI answered under another config (a canary searched in the old mode): not proof now
        baseline = None
        sd = self.state_dir()
        if sd:
            try:
                baseline = _core("history").load_baseline(sd, agent_id)
            except SourceUnavailable:
                baseline = None
        ev = _core("probe").gather(self.ctx, agent_id, slow, now, baseline_hash=baseline,
                                   scan_cache=self._scan_cache(agent_id), qmd_check=qmd_check)
        with self._caches_lock:
            hold = self._holds.get(ev.agent_id)
            if hold is not None and not hold.apply(ev):
                del self._holds[ev.agent_id]
        return _core("interpret").interpret(ev)

    def check_qmd(self, agent_id: str) -> bool:
        """``clawprobe.core.probe.check_qmd``: the qmd binary + store check (two Node starts), cached for the
        next fast probe; False when the agent has no qmd to check."""
        if self.ctx is None:
            return False
        self.reread_config()
        return bool(_core("probe").check_qmd(self.ctx, agent_id))

    def _scan_cache(self, agent_id: str) -> Any:
        with self._caches_lock:  # probe workers create caches while the event loop updates them
            cache = self._scan_caches.get(agent_id)
            if cache is None:
                cache = self._scan_caches[agent_id] = _core("probes.workspace_cache").WorkspaceCache()
                cache.watch(self._watched)
            return cache

    def _caches(self) -> list[Any]:
        with self._caches_lock:
            return list(self._scan_caches.values())

    def watching(self, roots: list[str] | None) -> None:
        """The watcher now covers ``roots`` recursively (``None``: it stopped): the workspace comparison may
        then be answered incrementally from changed paths (``clawprobe.core.probes.workspace_cache``)."""
        with self._caches_lock:
            self._watched = roots
            for cache in self._scan_caches.values():
                cache.watch(roots)

    def files_changed(self, paths: list[str]) -> None:
        """Every path of a watcher batch (not only the sample the UI shows): each is re-listed next probe."""
        for cache in self._caches():
            cache.mark(paths)

    def rescan(self) -> None:
        """Forget the cached workspace scans (the operator's ``r``): the next probe scans everything."""
        for cache in self._caches():
            cache.invalidate()

    def slow(self, agent_id: str, now: datetime) -> Any:
        """``clawprobe.core.probe.slow``: the 3–6 s ``openclaw`` CLI probes → ``SlowEvidence``, after the
        read-only store measurement ``clawprobe check`` takes first (``clawprobe.core.probe.measure_before``),
        which the next fast probes may judge freshness from (:meth:`fast`). The config files' identity is noted
        first, before anything can fail, for :meth:`slow_outdated`."""
        self._slow_started[agent_id] = self._config_files()  # what the openclaw CLI is about to read
        self.reread_config()  # a config fixed since discovery is the one the CLI probes run with
        seen = self._config_seen
        probe = _core("probe")
        before = probe.measure_before(self.ctx, agent_id, now)
        evidence = probe.slow(self.ctx, agent_id, now)
        hold = _core("interpret.coverage").BeforeHold(evidence, before)
        with self._caches_lock:
            self._holds[evidence.agent_id] = hold
        self._slow_seen[evidence.agent_id] = seen
        return evidence

    def slow_outdated(self, agent_id: str) -> bool:
        """The config files changed on disk since ``agent_id``'s last CLI lane started (measured: path, mtime,
        size, inode of the config and its ``$include``s) — whether that run answered or failed: its answers are
        for another config (and :meth:`fast` no longer uses them), so the lane must run again. The one place
        the dashboard decides that a run was overtaken by a config change."""
        started = self._slow_started.get(agent_id)
        return started is not None and self.ctx is not None and started != self._config_files()

    def watch_targets(self, agent_id: str) -> list[Any]:
        """``clawprobe.core.probe.watch_targets``: paths whose change re-probes this agent."""
        if self.ctx is None:
            return []
        return list(_core("probe").watch_targets(self.ctx, agent_id))

    def unavailable_receipt(self, agent_id: str, now: datetime) -> Receipt:
        """A receipt that says plainly why nothing could be measured (verdict: unverified)."""
        why = self.reason or "no OpenClaw install found"
        return Receipt(agent_id=agent_id, checked_at=now, probe_errors=[f"no OpenClaw install found: {why}"])

    def openclaw_path(self) -> str | None:
        """The OpenClaw CLI clawprobe discovered (``ctx.openclaw`` argv, as one command line), if known — what the
        walkthrough's allow-list accepts; repair commands start with :meth:`command_lines` instead."""
        if (look := self._look) is not None:
            return look.openclaw_path
        argv = getattr(self.ctx, "openclaw", None)
        return shlex.join(argv) if argv else None

    def command_lines(self) -> tuple[str | None, str | None]:
        """``(openclaw, clawprobe)``: the command lines repair commands start with so that they reach the install
        probed (``clawprobe.core.locate.command_lines``: ``--state-dir``/``--config`` carried); ``(None, None)``
        before discovery."""
        if (look := self._look) is not None:
            return look.lines
        c = self.ctx
        if c is None:
            return None, None
        lines = _core("locate").command_lines(getattr(c, "openclaw", None), getattr(c, "state_dir", None),
                                              getattr(c, "config_path", None))
        return lines.openclaw, lines.clawprobe

    def state_dir(self) -> str | None:
        """The OpenClaw state dir (``ctx.state_dir.path``), if known."""
        if (look := self._look) is not None:
            return look.state_dir
        located = getattr(self.ctx, "state_dir", None)
        return getattr(located, "path", None)

    def workspace(self, agent_id: str) -> str:
        """The agent's workspace dir, located like OpenClaw does for this version (``clawprobe.core.locate``)."""
        from clawprobe.core.probe import workspace_of

        return workspace_of(self.ctx, agent_id).path

    def plant_canary(self, agent_id: str, now: datetime) -> str:
        """Plant the canary, or rotate its token when one is planted (``clawprobe.core.canary_write.rotate``) — only after the
        operator confirmed. Writes ``<workspace>/memory/clawprobe-canary.md`` and clawprobe's own record.
        Raises ``clawprobe.core.canary.CanaryError`` (e.g. a foreign file in the way) or ``OSError``."""
        canary = _core("canary_write")
        if self.ctx is None or getattr(self.ctx.config, "error", None) is not None:
            raise SourceUnavailable("the OpenClaw config does not load; fix it before planting a canary")
        ws = self.workspace(agent_id)
        rec = canary.rotate(ws, agent_id, now=now)
        return (f"canary planted in {ws}/{rec.rel_path} (token sha256 {rec.token_sha256[:12]}…); "
                "OpenClaw indexes it on its next update")

    def save(self, receipt: Receipt, verdict: str) -> str:
        """Append ``receipt`` with its ``verdict`` to the history (``clawprobe.core.history.append``, atomic, under
        clawprobe's data dir); returns the history file."""
        return str(_core("history").append(receipt, verdict, self.state_dir() or ""))
