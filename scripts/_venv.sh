# Sourced by scripts/demo and scripts/test: make .venv (once) and install the project into it when
# pyproject.toml changed since the last install.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setting up .venv (first run only)…" >&2
  "$python" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip >&2
fi
want="$(sha256sum pyproject.toml | cut -c1-16)-$1"
if [ "$(cat .venv/.installed 2>/dev/null || true)" != "$want" ]; then
  .venv/bin/python -m pip install -q -e ".[$1]" >&2
  echo "$want" > .venv/.installed
fi
