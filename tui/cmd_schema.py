"""``clawprobe schema``: the versioned JSON Schema of the receipt (or of the diagnosis)."""

from __future__ import annotations

import argparse
import json

from core.diagnosis import Diagnosis
from core.receipt import Receipt


def run(args: argparse.Namespace) -> int:
    """Print the schema as JSON; always exit 0."""
    model = Diagnosis if args.diagnosis else Receipt
    print(json.dumps(model.model_json_schema(), indent=2))
    return 0
