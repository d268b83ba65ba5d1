"""Model-download progress: pure state over successive model-cache snapshots, with an injectable clock.

Input: :class:`clawprobe.core.probes.models.ModelCacheEvidence` snapshots (read-only ``stat``/trailer/lock reads).
Output: a :class:`DownloadReport` — one :class:`clawprobe.core.receipt.ModelDownload` per model the configured mode
needs, and a summary status — and its mapping onto ``Receipt.vectors`` (:func:`apply_to_vectors`).

Rules (spec §3 "warm-up window"; qmd.md §3.4–3.5; field-report §2.4):

* progress = allocated bytes of ``<file>.ipull`` (``st_blocks*512``) or complete chunks of its JSON trailer —
  never the apparent size (the file is sparse, total size + trailer from the first save);
* total = apparent size − trailer length (exact), else the model's expected size;
* rate (bytes/s) over the last ``rate_window_s`` of observations; ETA = remaining / rate;
* **stalled** = no growth for ``stall_after_s``; also when an embed process is alive (``.qmd-embed.lock`` PID is
  a live qmd) and no model file appears for ``stall_after_s`` — offline, qmd's downloader retries the
  Hugging Face lookup for ~12 min without ever creating a file, which is a stall, not "still downloading";
* a bounded **warm-up window** (``warmup_window_s``) starts at the first semantic probe (or the first
  download activity seen): inside it a download that makes progress is ``waiting`` — not a failure; no
  progress, or still unfinished past the window, is a failure with evidence.

Nothing here reads a clock: ``now`` is always passed in (:class:`DownloadWatcher` takes a ``clock``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.durations import human_duration
from clawprobe.core.lease import MAX_DURATION_S
from clawprobe.core.probes.models import ModelCacheEvidence, file_state, ipull_progress
from clawprobe.core.receipt import ACTIVE_DOWNLOAD_STATES, ModelDownload, Vectors

Status = Literal["ready", "waiting", "stalled", "failed", "missing"]


class DownloadPolicy(BaseModel):
    """Tunables, all in seconds: ``stall_after_s`` (no growth → stalled), ``warmup_window_s`` (how long a
    progressing first-run download is tolerated), ``rate_window_s`` (span of the rate estimate)."""

    model_config = ConfigDict(extra="forbid")
    stall_after_s: float = Field(120.0, gt=0)
    warmup_window_s: float = Field(1800.0, gt=0)
    rate_window_s: float = Field(30.0, gt=0)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DownloadPolicy:
        """Defaults overridden by ``CLAWPROBE_STALL_AFTER_S`` / ``CLAWPROBE_WARMUP_WINDOW_S`` (seconds);
        an unusable value keeps the default (never an error)."""
        kw: dict[str, float] = {}
        for key, name in (("stall_after_s", "CLAWPROBE_STALL_AFTER_S"), ("warmup_window_s", "CLAWPROBE_WARMUP_WINDOW_S")):
            try:
                v = float(env.get(name, ""))
            except ValueError:
                continue
            if v > 0:
                kw[key] = v
        return cls(**kw)


class Track(BaseModel):
    """What the watcher remembers about one model file between snapshots (bytes, UTC times)."""

    model_config = ConfigDict(extra="forbid")
    first_seen: datetime
    last_done: int | None = None
    last_growth_at: datetime
    samples: list[tuple[datetime, int]] = Field(default_factory=list)
    no_file_since: datetime | None = None


class TrackerState(BaseModel):
    """The watcher's memory: per model path a :class:`Track`, and when the warm-up window started."""

    model_config = ConfigDict(extra="forbid")
    tracks: dict[str, Track] = Field(default_factory=dict)
    window_started_at: datetime | None = None


class DownloadReport(BaseModel):
    """The models a mode needs and their download state at ``taken_at`` (UTC).

    ``status``: ``ready`` (all complete, or the mode needs none), ``waiting`` (downloading inside the warm-up
    window), ``stalled``, ``failed`` (past the window, corrupt or wrong-size file), ``missing`` (models absent
    and nothing downloading). ``evidence`` holds one line per fact used; ``detail`` is the one-line summary.
    """

    model_config = ConfigDict(extra="forbid")
    taken_at: datetime
    mode: str
    status: Status
    models: list[ModelDownload] = Field(default_factory=list)
    window_started_at: datetime | None = None
    window_ends_at: datetime | None = None
    embed_pid: int | None = None
    cache_dir: str | None = None
    detail: str | None = None
    evidence: list[str] = Field(default_factory=list)

    @property
    def missing_roles(self) -> list[str]:
        """Roles whose model is not complete."""
        return [m.role for m in self.models if m.state != "complete"]

    @property
    def active(self) -> bool:
        """True while some model is downloading or starting."""
        return any(m.state in ACTIVE_DOWNLOAD_STATES for m in self.models)


# ---------------------------------------------------------------------------------------------------------
# Formatting helpers (pure)
# ---------------------------------------------------------------------------------------------------------

def human_bytes(n: float | None) -> str:
    """``1536000`` → ``"1.5 MB"`` (decimal units); ``None`` → ``"?"``."""
    if n is None:
        return "?"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


def percent(m: ModelDownload) -> float | None:
    """Completion in % (0–100) of one model, ``None`` when the total is unknown."""
    if m.state == "complete":
        return 100.0
    if m.done_bytes is None or not m.total_bytes:
        return None
    return min(100.0, 100.0 * m.done_bytes / m.total_bytes)


def describe(m: ModelDownload, now: datetime) -> str:
    """One model's state in words: ``downloading 42% · 3.1 MB/s · ETA 1m 05s``, ``stalled 3m 10s …``."""
    if m.state == "complete":
        return "complete"
    if m.state == "downloading":
        pct = percent(m)
        parts = [f"downloading {pct:.0f}%" if pct is not None else "downloading",
                 f"{human_bytes(m.done_bytes)} of {human_bytes(m.total_bytes)}"]
        parts.append(f"{human_bytes(m.rate_bps)}/s" if m.rate_bps else "rate ?")
        parts.append(f"ETA {human_duration(m.eta_s)}" if m.eta_s is not None else "ETA ?")
        return " · ".join(parts)
    if m.state == "stalled":
        since = m.stalled_since or m.last_growth_at
        age = f" for {human_duration((now - since).total_seconds())}" if since else ""
        pct = percent(m)
        at = f" at {pct:.0f}%" if pct is not None else ""
        return f"stalled{at}{age} (since {since:%H:%M:%S} UTC)" if since else f"stalled{at}"
    if m.state == "starting":
        return "starting (looking up the download)"
    return m.state.replace("_", " ")


# ---------------------------------------------------------------------------------------------------------
# The assessment (pure)
# ---------------------------------------------------------------------------------------------------------

def _rate(samples: list[tuple[datetime, int]]) -> float | None:
    if len(samples) < 2:
        return None
    (t0, d0), (t1, d1) = samples[0], samples[-1]
    dt = (t1 - t0).total_seconds()
    if dt <= 0 or d1 < d0:
        return None
    return (d1 - d0) / dt


def _not_after(t: datetime | None, now: datetime) -> datetime | None:
    """A file time is evidence only when it is not in the future of ``now`` (clock skew, injected clocks)."""
    return t if t is not None and t <= now else None


def assess(evidence: ModelCacheEvidence, now: datetime, policy: DownloadPolicy | None = None,
           state: TrackerState | None = None, *,
           window_started_at: datetime | None = None) -> tuple[DownloadReport, TrackerState]:
    """One snapshot → ``(report, new state)``. Pure: the caller supplies ``now`` and the previous state.

    With ``state=None`` it is a one-shot reading: growth is dated by the ``.ipull`` mtime and an embed's start
    by the lock's mtime, so a stall is visible even without history (no rate then). ``window_started_at``
    pins the warm-up window to the first semantic probe; otherwise the window opens at the first download
    activity (lock or ``.ipull``) seen.
    """
    pol = policy or DownloadPolicy()
    st = state.model_copy(deep=True) if state is not None else TrackerState()
    lock = evidence.lock
    lock_alive = bool(lock and lock.exists and lock.pid_alive)
    lock_since = _not_after(lock.mtime, now) if lock_alive and lock else None
    models: list[ModelDownload] = []
    evidence_lines: list[str] = []
    activity: list[datetime] = []
    stall = timedelta(seconds=pol.stall_after_s)
    if lock_alive and lock:
        evidence_lines.append(f"embed lock {lock.path}: pid {lock.pid} alive ({' '.join(lock.cmdline[-3:])})")
    for e in evidence.models:
        spec = e.spec
        key = spec.path or spec.uri
        fs, fdetail = file_state(e)
        m = ModelDownload(role=spec.role, name=spec.name, state="missing", detail=fdetail)
        if fs == "complete":
            m.state, m.done_bytes, m.total_bytes = "complete", e.final.size, e.final.size
            st.tracks.pop(key, None)
        elif fs in ("corrupt", "size_mismatch"):
            m.state = fs
            m.done_bytes = e.final.size
            m.total_bytes = spec.expected_bytes
            evidence_lines.append(fdetail)
        elif fs == "partial":
            done, total = ipull_progress(e)
            mtime = _not_after(e.ipull.mtime, now)
            tr = st.tracks.get(key)
            if tr is None or tr.last_done is None:
                tr = Track(first_seen=now, last_done=done, last_growth_at=mtime or now)
            elif done is not None and done > tr.last_done:
                tr.last_done, tr.last_growth_at = done, now
            if mtime is not None and mtime > tr.last_growth_at:
                tr.last_growth_at = mtime
            if done is not None:
                tr.samples.append((now, done))
                cutoff = now - timedelta(seconds=pol.rate_window_s)
                keep = [s for s in tr.samples if s[0] >= cutoff]
                tr.samples = keep if len(keep) >= 2 else tr.samples[-2:]
            st.tracks[key] = tr
            started = _not_after(evidence.cache_dir_mtime, now)  # when the .ipull appeared (one download)
            activity.append(min(x for x in (tr.first_seen, mtime, started) if x is not None))
            m.done_bytes, m.total_bytes, m.last_growth_at = done, total, tr.last_growth_at
            rate = _rate(tr.samples)
            m.rate_bps = rate if rate else None
            if rate and total is not None and done is not None:
                eta = max(0.0, (total - done) / rate)
                m.eta_s = eta if eta <= MAX_DURATION_S else None  # past 30 days: no meaningful estimate
            if now - tr.last_growth_at >= stall:
                m.state, m.stalled_since, m.rate_bps, m.eta_s = "stalled", tr.last_growth_at, None, None
                evidence_lines.append(f"{spec.name}.ipull: {human_bytes(done)} of {human_bytes(total)}, "
                                      f"no growth since {tr.last_growth_at:%H:%M:%S} UTC "
                                      f"({human_duration((now - tr.last_growth_at).total_seconds())} ≥ stall time "
                                      f"{human_duration(pol.stall_after_s)})")
            else:
                m.state = "downloading"
        else:  # missing: nothing on disk
            tr = st.tracks.get(key)
            if lock_alive and spec.role == "embed":
                since = tr.no_file_since if tr and tr.no_file_since else None
                since = min(x for x in (since, lock_since, now) if x is not None)
                st.tracks[key] = Track(first_seen=tr.first_seen if tr else now, last_growth_at=since, no_file_since=since)
                activity.append(since)
                if now - since >= stall:
                    m.state, m.stalled_since = "stalled", since
                    m.detail = (f"qmd embed (pid {lock.pid}) alive for {human_duration((now - since).total_seconds())} "
                                f"but {spec.name} never appeared: the download cannot start "
                                f"(model host unreachable?)") if lock else None
                    evidence_lines.append(m.detail or "")
                else:
                    m.state = "starting"
                    m.detail = f"qmd embed (pid {lock.pid if lock else '?'}) alive; no model file yet"
            else:
                st.tracks.pop(key, None)
        models.append(m)

    if window_started_at is not None:
        st.window_started_at = window_started_at
    elif st.window_started_at is None and activity:
        st.window_started_at = min(activity)
    ws = st.window_started_at
    we = ws + timedelta(seconds=pol.warmup_window_s) if ws is not None else None

    states = {m.state for m in models}
    if not models or states == {"complete"}:
        status: Status = "ready"
    elif states & {"corrupt", "size_mismatch"}:
        status = "failed"
    elif "stalled" in states:
        status = "stalled"
    elif states & set(ACTIVE_DOWNLOAD_STATES):
        status = "failed" if we is not None and now > we else "waiting"
        if status == "failed" and we is not None:
            evidence_lines.append(f"warm-up window ({human_duration(pol.warmup_window_s)}) ended "
                                  f"{human_duration((now - we).total_seconds())} ago with downloads unfinished")
    else:
        status = "missing"
        evidence_lines.append("model(s) missing and no download running: " +
                              ", ".join(f"{m.role} ({m.name})" for m in models if m.state == "missing"))
    report = DownloadReport(taken_at=now, mode=evidence.mode, status=status, models=models,
                            window_started_at=ws, window_ends_at=we,
                            embed_pid=lock.pid if lock_alive and lock else None, cache_dir=evidence.cache_dir,
                            evidence=[x for x in evidence_lines if x])
    report.detail = summary(report, now)
    return report, st


def summary(report: DownloadReport, now: datetime) -> str:
    """The one-line summary used as ``Receipt.vectors.detail``."""
    if report.status == "ready":
        return f"{report.mode} mode: " + ("no models needed" if not report.models else "all models complete")
    lacking = [m for m in report.models if m.state != "complete"]
    body = "; ".join(f"{m.role} {describe(m, now)}" for m in lacking)
    if report.status == "waiting":
        left = f", warm-up window ends in {human_duration((report.window_ends_at - now).total_seconds())}" \
            if report.window_ends_at else ""
        moving = any(m.state == "downloading" and m.rate_bps for m in lacking)
        how = "progressing, not a failure" if moving else \
            "no bytes received yet (offline it never starts), not judged a failure"
        return f"model download waiting ({how}{left}): {body}"
    if report.status == "stalled":
        stalled = next(m for m in report.models if m.state == "stalled")
        return f"model download stalled: {stalled.role} — {stalled.detail if stalled.done_bytes is None else describe(stalled, now)}"
    if report.status == "failed":
        return f"model download failed: {body}" + (f" ({report.evidence[-1]})" if report.evidence else "")
    return f"model(s) missing, nothing downloading: {body}"


class DownloadWatcher:
    """Stateful wrapper for a live view: ``observe(evidence)`` → :class:`DownloadReport`.

    ``clock`` returns the current UTC time (inject a fake in tests); ``policy`` holds the stall time and the
    warm-up window. Call :meth:`first_semantic_probe` when clawprobe (or the operator) starts the first
    semantic probe, to pin the window there.
    """

    def __init__(self, policy: DownloadPolicy | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.policy = policy or DownloadPolicy()
        self.clock = clock or (lambda: datetime.now(UTC))
        self.state = TrackerState()
        self._window: datetime | None = None
        self.last: DownloadReport | None = None
        self._lock = threading.Lock()

    def first_semantic_probe(self, at: datetime | None = None) -> None:
        """Open the warm-up window at ``at`` (default: now) unless it is already open."""
        if self._window is None and self.state.window_started_at is None:
            self._window = at or self.clock()

    def observe(self, evidence: ModelCacheEvidence, now: datetime | None = None) -> DownloadReport:
        """Fold one snapshot into the state and return the report (time: ``now``, else ``clock``)."""
        with self._lock:
            report, self.state = assess(evidence, now or self.clock(), self.policy, self.state,
                                        window_started_at=self._window)
            self._window = None
            self.last = report
        return report


_WATCHERS: dict[Hashable, DownloadWatcher] = {}
_WATCHERS_LOCK = threading.Lock()


def watcher_for(key: Hashable, policy: DownloadPolicy | None = None) -> DownloadWatcher:
    """The process-wide watcher for ``key`` (e.g. ``(state_dir, agent_id)``), created on first use — so
    repeated fast probes get rates, ETAs and growth-based stalls instead of one-shot readings."""
    with _WATCHERS_LOCK:
        w = _WATCHERS.get(key)
        if w is None:
            w = _WATCHERS[key] = DownloadWatcher(policy)
        return w


def should_open(previous: DownloadReport | None, current: DownloadReport) -> bool:
    """True when a download has just started (no model active before, one active now): open the pane."""
    was_active = previous.active if previous is not None else False
    return current.active and not was_active


def apply_to_vectors(vectors: Vectors, report: DownloadReport) -> Vectors:
    """``Receipt.vectors`` with the model-cache facts merged in (a copy; the input is not changed).

    Sets ``missing_models`` (roles not complete; ``[]`` when all are), ``downloads``, ``download_status``,
    ``embed_running_pid`` (a live lock PID, when not already known). When a needed model is not complete,
    ``not_ready_reason`` becomes ``model_download`` (it replaces a bare ``pending``: embeddings cannot finish
    without the model) and the summary joins ``detail``.
    """
    upd: dict = {"missing_models": report.missing_roles, "downloads": report.models,
                 "download_status": report.status}
    if vectors.embed_running_pid is None and report.embed_pid is not None:
        upd["embed_running_pid"] = report.embed_pid
    if report.missing_roles:
        if vectors.not_ready_reason in (None, "pending"):
            upd["not_ready_reason"] = "model_download"
        upd["detail"] = "; ".join(x for x in (report.detail, vectors.detail) if x)
    return vectors.model_copy(update=upd)


def format_downloads(vectors: Vectors, now: datetime) -> list[str]:
    """Plain-text lines for ``clawprobe check`` (no markup); pass the receipt's ``checked_at`` as ``now``.

    ``[]`` when the model cache was not inspected or the mode needs no model. Example::

        models: stalled
          embed    hf_ggml-org_embeddinggemma-300M-Q8_0.gguf  stalled for 2m 10s (since 02:41:10 UTC)
                   qmd embed (pid 4242) alive for 2m 10s but … never appeared: the download cannot start …
    """
    if not vectors.downloads:
        return []
    at = now
    lines = [f"models: {vectors.download_status or '?'}"]
    width = max(len(m.name) for m in vectors.downloads)
    for m in vectors.downloads:
        lines.append(f"  {m.role:<8} {m.name:<{width}}  {describe(m, at)}")
        if m.state in ("stalled", "corrupt", "size_mismatch", "missing", "starting") and m.detail:
            lines.append(f"  {'':<8} {m.detail}")
    return lines


def download_started(previous: Vectors | None, current: Vectors) -> bool:
    """Receipt-level :func:`should_open`: a model is downloading/starting now and none was before."""
    return current.downloading and not (previous is not None and previous.downloading)
