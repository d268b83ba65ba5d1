"""The ``openclaw`` CLI probes' run records → their parsed facts (pure; the first step of interpreting
:class:`~clawprobe.core.evidence.SlowEvidence`).

Gather keeps what the programs printed (:class:`~clawprobe.core.runrecord.RunRecord`); this module is the one
place those outputs are parsed, one function per program output: ``memory status --json`` (+ ``config
validate --json``) by :func:`clawprobe.core.probes.openclaw_cli.status_of_run`, ``memory search TOKEN --json``
by :func:`~clawprobe.core.probes.openclaw_cli.search_of_run`, the direct ``qmd search`` by
:func:`clawprobe.core.interpret.canary.direct_of_run`. It also decides the two facts that read more than one
run: the status probe error and whether the CLI hung (:data:`SEARCH_HUNG`).

Version-1 evidence (a bundle written before run records existed) carries the parsed facts only; it is
returned as it is.
"""

from __future__ import annotations

from typing import Any

from clawprobe.core.evidence import Extra, SlowEvidence
from clawprobe.core.interpret.canary import direct_of_run
from clawprobe.core.probes import openclaw_cli as oc

SEARCH_HUNG = "openclaw memory search timed out"  #: probe error prefix (clawprobe.core.rules.PROBE_ERROR_TAGS)


def extra_facts(x: Extra) -> dict[str, Any]:
    """The parsed ``status_deep`` (:func:`~clawprobe.core.probes.openclaw_cli.status_of_run`) and
    ``status_text`` (:func:`~clawprobe.core.probes.openclaw_cli.parse_status_text`) of the extra evidence's
    ``memory status --deep --json`` and plain ``memory status`` runs, as an update of ``x`` (pure; the parsed
    fields as they are when no run is kept: version 1)."""
    return {"status_deep": oc.status_of_run(x.status_deep_run) if x.status_deep_run is not None else x.status_deep,
            "status_text": oc.parse_status_text(x.status_text_run.stdout) if x.status_text_run is not None
            else x.status_text}


def slow_facts(slow: SlowEvidence, qmd: bool) -> SlowEvidence:
    """The CLI probes with their parsed facts filled from the run records (a new object; pure).

    * ``status`` from ``status_run`` (+ ``validate_run``; ``validate_run`` alone when status was withheld:
      only its config verdict); a failed status call (exit ≠ 0 or an error) adds ``openclaw memory status:
      <error>`` to ``errors``;
    * ``search`` from ``search_run``; ``direct`` from ``direct_run`` and the canary spec;
    * ``cli_hung``: ``memory search`` was killed at clawprobe's timeout, OpenClaw named no search deadline of
      its own, and qmd answered directly (or the backend is not QMD, ``qmd`` false) — the CLI hung and the
      retrieval is unmeasured; ``errors`` then gains a :data:`SEARCH_HUNG` line. Not when the builtin engine's
      search printed OpenClaw's own query-embedding retry (``stderr.query_retry``): the provider did not answer,
      which the builtin interpreter reads.

    Evidence without run records (version 1) is returned unchanged.
    """
    if not slow.runs:
        return slow
    errors: list[str] = []
    status = search = direct = None
    if slow.status_run is not None:
        run = slow.status_run
        status = oc.status_of_run(run, slow.validate_run)
        if run.rc != 0 or status.error:
            errors.append(f"openclaw memory status: {status.error or run.reason or f'exit {run.rc}'}")
    elif slow.validate_run is not None:  # status withheld (no index to probe): OpenClaw's validator alone
        status = oc.apply_validation(oc.StatusResult(), oc.validate_of_run(slow.validate_run))
    errors += slow.errors
    if slow.direct_run is not None and slow.canary is not None:
        direct = direct_of_run(slow.direct_run, slow.canary.token, slow.canary.expected_path)
    hung = False
    if slow.search_run is not None:
        search = oc.search_of_run(slow.search_run)
        qmd_answers = direct is not None and direct.error is None
        provider_slow = not qmd and search.stderr.query_retry is not None  # the provider, not the CLI (builtin)
        if search.timed_out and search.stderr.timeout_ms is None and (qmd_answers or not qmd) and not provider_slow:
            hung = True  # a qmd that fails directly too (a locked index) keeps the timeout outcome
            errors.append(f"{SEARCH_HUNG}: {slow.search_run.reason} — OpenClaw reported no search deadline of its "
                          "own" + (" and qmd answers directly" if qmd_answers else "") + ", so the CLI did not answer")
    return slow.model_copy(update={"status": status, "search": search, "direct": direct, "cli_hung": hung,
                                   "errors": errors})


__all__ = ["SEARCH_HUNG", "extra_facts", "slow_facts"]
