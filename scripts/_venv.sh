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
# $1 is "test" for the test tools too, or empty for the product alone; a venv set up for the tests
# also serves the demo, so switching between the two commands installs nothing.
hash="$(sha256sum pyproject.toml | cut -c1-16)"
have="$(cat .venv/.installed 2>/dev/null || true)"
if [ "$have" != "$hash-test" ] && [ "$have" != "$hash-${1:-}" ]; then
  if [ -n "${1:-}" ]; then spec=".[$1]"; else spec="."; fi
  .venv/bin/python -m pip install -q -e "$spec" >&2
  echo "$hash-${1:-}" > .venv/.installed
fi
