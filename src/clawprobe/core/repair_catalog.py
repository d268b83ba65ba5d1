"""Loading the repair catalog (``repairs.toml``, shipped inside the package) into validated models.

The file holds ``[steps.NAME]`` tables (steps shared by several entries) and ``[[repair]]`` entries, each
with its ``[[repair.step]]`` list — a step either ``ref = "NAME"`` or written out. Everything is validated by
:class:`~clawprobe.core.repair_models.RepairAction` / :class:`~clawprobe.core.repair_models.RepairStep`
(extra keys forbidden). A load error (:class:`CatalogError`, naming the entry) is raised for TOML that does
not parse, an unknown top-level table, an unknown verdict, an unknown step reference, a ``{placeholder}``
that :mod:`clawprobe.core.repair_context` cannot fill (not in ``CONTEXT_KEYS``), a ``(verdict, reason)``
given twice, and a verdict without its general entry (the fallback of
:func:`clawprobe.core.repairs.lookup`).
"""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any

from pydantic import ValidationError

from clawprobe.core.repair_context import CONTEXT_KEYS, PLACEHOLDER
from clawprobe.core.repair_models import RepairAction, RepairStep
from clawprobe.core.verdicts import Verdict

#: the catalog's key: (verdict, sub-reason or variant key ``reason/qmd`` …, ``None`` for the general entry)
CatalogKey = tuple[Verdict, str | None]

_VERDICTS = {v.value for v in Verdict}


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


def parse_catalog(text: str, source: str = "repairs.toml") -> dict[CatalogKey, RepairAction]:
    """The catalog in ``text`` (TOML), keyed by ``(verdict, reason)`` in file order.

    ``source`` names the file in error messages. Raises :class:`CatalogError` (see the module doc).
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CatalogError(f"{source}: not valid TOML: {e}") from None
    extra = sorted(set(doc) - {"steps", "repair"})
    if extra:
        raise CatalogError(f"{source}: unknown top-level key(s) {', '.join(extra)} (only [steps.NAME] and [[repair]])")
    steps_doc, repairs_doc = doc.get("steps", {}), doc.get("repair", [])
    if not isinstance(steps_doc, dict) or not all(isinstance(v, dict) for v in steps_doc.values()):
        raise CatalogError(f"{source}: steps must be tables, [steps.NAME]")
    if not isinstance(repairs_doc, list) or not all(isinstance(v, dict) for v in repairs_doc):
        raise CatalogError(f"{source}: repair must be an array of tables, [[repair]]")
    shared = {name: _step(raw, f"{source}: [steps.{name}]") for name, raw in steps_doc.items()}
    out: dict[CatalogKey, RepairAction] = {}
    for n, raw in enumerate(repairs_doc, 1):
        where = f"{source}: [[repair]] #{n} ({raw.get('verdict')}, {raw.get('reason')})"
        if not isinstance(raw.get("step", []), list) or not all(isinstance(v, dict) for v in raw.get("step", [])):
            raise CatalogError(f"{where}: step must be an array of tables, [[repair.step]]")
        if raw.get("verdict") not in _VERDICTS:
            raise CatalogError(f"{where}: unknown verdict {raw.get('verdict')!r} (known: {', '.join(sorted(_VERDICTS))})")
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
            action = RepairAction.model_validate({**fields, "steps": steps})
        except ValidationError as e:
            raise CatalogError(f"{where}: {_errors(e)}") from None
        _placeholders(action, where)
        key = (action.verdict, action.reason)
        if key in out:
            raise CatalogError(f"{where}: ({action.verdict.value}, {action.reason}) is given twice")
        out[key] = action
    missing = [v.value for v in Verdict if (v, None) not in out]
    if missing:
        raise CatalogError(f"{source}: no general entry (an entry without reason) for {', '.join(missing)}")
    return out


def load_catalog() -> dict[CatalogKey, RepairAction]:
    """The catalog shipped in the package (``clawprobe/core/repairs.toml``), parsed and validated.

    Raises :class:`CatalogError` when the shipped file is invalid (a packaging or editing error).
    """
    text = resources.files("clawprobe.core").joinpath("repairs.toml").read_text(encoding="utf-8")
    return parse_catalog(text, "clawprobe/core/repairs.toml")
