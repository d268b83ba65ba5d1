#!/usr/bin/env bash
# The whole test suite: the lint/type/layer gates, the real-program test bed (idempotent, outside the repo),
# the real Prometheus tools (promtool, node_exporter, amtool: Debian packages, idempotent), then pytest.
# Usage: bash scripts/test.sh [pytest args]   (uses .venv/bin/python when present, else $PYTHON or python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
  if [[ -x .venv/bin/python ]]; then PY="$PWD/.venv/bin/python"; else PY=python3; fi
fi
# The gates first, cheapest first, each failing fast with the command to re-run: ruff (pyproject
# [tool.ruff]), the layer contracts (import-linter, [tool.importlinter]), mypy on clawprobe.core and clawprobe.cli ([tool.mypy]).
gate() {  # gate NAME COMMAND...: run it quietly; on failure show its output and stop before pytest
  local name="$1"; shift
  local out
  if ! out="$("$@" 2>&1)"; then
    printf '%s\n' "$out" >&2
    printf '\nscripts/test.sh: the %s gate failed (re-run: %s); the tests did not run\n' "$name" "$*" >&2
    exit 1
  fi
  printf 'gate %s: ok\n' "$name"
}
gate ruff "$PY" -m ruff check .
LINT_IMPORTS="$(dirname "$PY")/lint-imports"  # import-linter's command, beside the interpreter (the venv)
[[ -x "$LINT_IMPORTS" ]] || LINT_IMPORTS=lint-imports
gate import-linter "$LINT_IMPORTS"
gate mypy "$PY" -m mypy
CLAWPROBE_PYTHON="$PY" bash scripts/install-testbed.sh
bash scripts/install-promstack.sh
# Two workers (pytest-xdist), one test file each at a time (--dist loadfile: a module's real state is built once,
# on one worker): the real-program tests wait on `openclaw`/`qmd` children, so one pytest process leaves a core
# idle. CLAWPROBE_TEST_WORKERS=0 runs in one process.
exec "$PY" -m pytest -p no:cacheprovider -n "${CLAWPROBE_TEST_WORKERS:-2}" --dist loadfile "$@"
