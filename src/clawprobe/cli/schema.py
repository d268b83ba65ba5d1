"""``clawprobe schema [--diagnosis | --bundle]``: the versioned JSON Schema of the receipt (or of the diagnosis, or of
the support bundle)."""

from __future__ import annotations

import argparse
import json

from clawprobe.cli.main import emit
from clawprobe.core.diagnosis import Diagnosis
from clawprobe.core.receipt import Receipt


def run(args: argparse.Namespace) -> int:
    """Print the schema as JSON; exit 0 (a closed pipe included: the schema is not a verdict)."""
    if getattr(args, "bundle", False):
        from clawprobe.core.bundle import bundle_schema

        emit(json.dumps(bundle_schema(), indent=2), utf8=True)
        return 0
    model = Diagnosis if args.diagnosis else Receipt
    emit(json.dumps(model.model_json_schema(), indent=2), utf8=True)
    return 0
