# Sourced by tools/test and tools/tour: make .venv on first use and keep it in
# step with setup.cfg (reinstall when setup.cfg changes).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "astjax: creating .venv (first use)" >&2
    "$PY" -m venv .venv
fi
STAMP=.venv/.astjax-installed
WANT="$(sha256sum setup.cfg pyproject.toml | sha256sum | cut -c1-16)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    echo "astjax: installing dependencies into .venv" >&2
    .venv/bin/python -m pip install -q --upgrade pip >&2
    .venv/bin/python -m pip install -q -e ".[test]" >&2
    echo "$WANT" > "$STAMP"
fi
