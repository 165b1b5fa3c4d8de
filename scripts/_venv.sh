# Sourced by the scripts: make .venv with Python 3.11 and install gpugauge into it (with extras "$1").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=""
for cand in python3.11 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    PY="$cand"; break
  fi
done
if [ -z "$PY" ]; then echo "gpugauge needs Python 3.11 (python3.11 on PATH)" >&2; exit 1; fi
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
extras="${1:-}"
stamp=".venv/.installed-${extras:-base}-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
  touch "$stamp"
fi
