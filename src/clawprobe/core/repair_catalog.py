"""Loading the repair catalog (``clawprobe/core/catalog/``, shipped inside the package) into validated models.

The catalog is one TOML file per verdict, ``<verdict>.toml``, holding that verdict's ``[[repair]]`` entries
(each with its ``[[repair.step]]`` list — a step either ``ref = "NAME"`` or written out), and ``steps.toml``
with the ``[steps.NAME]`` tables several entries share. A verdict's file is read when a diagnosis first needs
it (:func:`load_verdict`, once per process): the first frame of the dashboard parses one or two small files,
not the 150 KB of all of them (≈ 20 ms of TOML, ``docs/performance.md`` stop 33). Everything is validated by
:class:`~clawprobe.core.repair_models.RepairAction` / :class:`~clawprobe.core.repair_models.RepairStep` (extra
keys forbidden). A load error (:class:`CatalogError`, naming the file and the entry) is raised for TOML that
does not parse, an unknown top-level table, a ``verdict`` key (the file's name is the verdict), an unknown step
reference, a ``{placeholder}`` that :mod:`clawprobe.core.repair_context` cannot fill (not in ``CONTEXT_KEYS``),
a reason given twice, a file without its general entry (the fallback of :func:`clawprobe.core.repairs.lookup`),
a verdict without a file and a file that names no verdict.
"""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawprobe.core.repair_context import CONTEXT_KEYS, PLACEHOLDER
from clawprobe.core.repair_models import RepairAction, RepairStep
from clawprobe.core.verdicts import Verdict

#: the catalog's key: (verdict, sub-reason or variant key ``reason/qmd`` …, ``None`` for the general entry)
CatalogKey = tuple[Verdict, str | None]
#: the shipped catalog's directory (a package data dir: always a real directory, the package is never zipped)
CATALOG_DIR = Path(__file__).with_name("catalog")
SHARED_STEPS = "steps.toml"
_VERDICTS = {v.value for v in Verdict}

_lock = threading.Lock()
_shared: dict[str, RepairStep] | None = None
_loaded: dict[Verdict, dict[CatalogKey, RepairAction]] = {}


class CatalogError(ValueError):
    """The repair catalog file is not valid; the message names the file, the entry and what is wrong."""


def _errors(e: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in e.errors())


def _step(raw: Any, where: str) -> RepairStep:
    try:
        return RepairStep.model_validate(raw)
    except ValidationError as e:
        raise CatalogError(f"{where}: {_errors(e)}") from None


def _placeholders(action: RepairAction, where: str) -> None:
    fields = [("title", action.title), ("command", action.command), ("why", action.why), ("dont", action.dont)]
    for i, st in enumerate(action.steps, 1):
        fields += [(f"step {i} {k}", getattr(st, k)) for k in ("title", "check", "command", "verify")]
    for name, text in fields:
        unknown = sorted(set(PLACEHOLDER.findall(text or "")) - CONTEXT_KEYS)
        if unknown:
            raise CatalogError(f"{where}: {name} uses unknown placeholder(s) {', '.join('{' + k + '}' for k in unknown)} "
                               f"(known: {', '.join(sorted(CONTEXT_KEYS))})")


def _toml(text: str, source: str, allowed: str) -> Any:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CatalogError(f"{source}: not valid TOML: {e}") from None
    extra = sorted(set(doc) - {allowed})
    if extra:
        raise CatalogError(f"{source}: unknown top-level key(s) {', '.join(extra)} (only {allowed} here)")
    return doc.get(allowed)


def parse_steps(text: str, source: str = SHARED_STEPS) -> dict[str, RepairStep]:
    """The shared steps in ``text`` (TOML ``[steps.NAME]`` tables), by name. Raises :class:`CatalogError`."""
    doc = _toml(text, source, "steps") or {}
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise CatalogError(f"{source}: steps must be tables, [steps.NAME]")
    return {name: _step(raw, f"{source}: [steps.{name}]") for name, raw in doc.items()}


def parse_verdict(text: str, verdict: Verdict, shared: dict[str, RepairStep],
                  source: str = "<verdict>.toml") -> dict[CatalogKey, RepairAction]:
    """The entries of ``verdict``'s file ``text`` (TOML ``[[repair]]``), keyed by ``(verdict, reason)`` in
    file order; ``ref`` steps are taken from ``shared`` (the same object in every entry that names it).

    ``source`` names the file in error messages. Raises :class:`CatalogError` (see the module doc).
    """
    repairs_doc = _toml(text, source, "repair") or []
    if not isinstance(repairs_doc, list) or not all(isinstance(v, dict) for v in repairs_doc):
        raise CatalogError(f"{source}: repair must be an array of tables, [[repair]]")
    out: dict[CatalogKey, RepairAction] = {}
    for n, raw in enumerate(repairs_doc, 1):
        where = f"{source}: [[repair]] #{n} ({raw.get('reason')})"
        if "verdict" in raw:
            raise CatalogError(f"{where}: no verdict key here: the file's name is the verdict ({verdict.value})")
        if not isinstance(raw.get("step", []), list) or not all(isinstance(v, dict) for v in raw.get("step", [])):
            raise CatalogError(f"{where}: step must be an array of tables, [[repair.step]]")
        if "steps" in raw:
            raise CatalogError(f"{where}: write steps as [[repair.step]] tables, not a steps key")
        steps: list[RepairStep] = []
        for i, st in enumerate(raw.get("step", []), 1):
            if "ref" in st:
                if set(st) != {"ref"}:
                    raise CatalogError(f"{where}: step {i} has ref and other keys ({', '.join(sorted(set(st) - {'ref'}))})")
                if st["ref"] not in shared:
                    raise CatalogError(f"{where}: step {i} refers to unknown shared step {st['ref']!r} "
                                       f"(known: {', '.join(sorted(shared))})")
                steps.append(shared[st["ref"]])
            else:
                steps.append(_step(st, f"{where}: step {i}"))
        fields = {k: v for k, v in raw.items() if k != "step"}
        try:
            action = RepairAction.model_validate({**fields, "verdict": verdict, "steps": steps})
        except ValidationError as e:
            raise CatalogError(f"{where}: {_errors(e)}") from None
        _placeholders(action, where)
        key = (action.verdict, action.reason)
        if key in out:
            what = f"reason {action.reason!r}" if action.reason else "the general entry (no reason)"
            raise CatalogError(f"{where}: {what} is given twice")
        out[key] = action
    if (verdict, None) not in out:
        raise CatalogError(f"{source}: no general entry (an entry without reason) for {verdict.value}")
    return out


def _read(directory: Path, name: str) -> tuple[str, str]:
    source = f"clawprobe/core/catalog/{name}" if directory == CATALOG_DIR else str(directory / name)
    try:
        return (directory / name).read_text(encoding="utf-8"), source
    except OSError as e:
        raise CatalogError(f"{source}: cannot be read ({e.strerror})") from None


def _verdict_file(directory: Path, verdict: Verdict, shared: dict[str, RepairStep]) -> dict[CatalogKey, RepairAction]:
    text, source = _read(directory, f"{verdict.value}.toml")
    return parse_verdict(text, verdict, shared, source)


def _no_stray_file(directory: Path) -> None:
    stray = sorted(p.name for p in directory.glob("*.toml") if p.name != SHARED_STEPS and p.stem not in _VERDICTS)
    if stray:
        raise CatalogError(f"{directory}: {', '.join(stray)} name(s) no verdict (known: {', '.join(sorted(_VERDICTS))})")


def load_dir(directory: Path) -> dict[CatalogKey, RepairAction]:
    """Every verdict's file in ``directory`` (and its ``steps.toml``), read now, keyed by ``(verdict, reason)``
    in :class:`Verdict` order. Raises :class:`CatalogError` (see the module doc)."""
    _no_stray_file(directory)
    shared = parse_steps(*_read(directory, SHARED_STEPS))
    return {k: a for v in Verdict for k, a in _verdict_file(directory, v, shared).items()}


def load_verdict(verdict: Verdict) -> dict[CatalogKey, RepairAction]:
    """``verdict``'s entries in the shipped catalog, read and validated on the first call for that verdict and
    kept for the process (thread-safe; callers must not change the mapping). Raises :class:`CatalogError` when
    the shipped file is missing or invalid (a packaging or editing error)."""
    global _shared
    with _lock:
        if verdict not in _loaded:
            if _shared is None:
                _shared = parse_steps(*_read(CATALOG_DIR, SHARED_STEPS))
            _loaded[verdict] = _verdict_file(CATALOG_DIR, verdict, _shared)
        return _loaded[verdict]


def load_catalog() -> dict[CatalogKey, RepairAction]:
    """The whole shipped catalog (every verdict's file, through :func:`load_verdict`), keyed by
    ``(verdict, reason)``, verdicts in :class:`Verdict` order. Raises :class:`CatalogError`."""
    _no_stray_file(CATALOG_DIR)
    return {k: a for v in Verdict for k, a in load_verdict(v).items()}
