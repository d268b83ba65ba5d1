#!/usr/bin/env bash
# The whole test suite: installs the real-program test bed (idempotent, outside the repo) and the real
# Prometheus tools (promtool, node_exporter, amtool: Debian packages, idempotent), then pytest.
# Usage: bash scripts/test.sh [pytest args]   (uses .venv/bin/python when present, else $PYTHON or python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
  if [[ -x .venv/bin/python ]]; then PY="$PWD/.venv/bin/python"; else PY=python3; fi
fi
CLAWPROBE_PYTHON="$PY" bash scripts/install-testbed.sh
bash scripts/install-promstack.sh
exec "$PY" -m pytest -p no:cacheprovider "$@"
