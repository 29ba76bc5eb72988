#!/usr/bin/env bash
# The Home Assistant core that tests/mqtt/test_homeassistant.py runs (tests/homeassistant.py), in a
# venv of its own: built once per version under ~/.cache/companion-tests/ and reused after; `.ready`,
# written last, marks a finished build. Without it (no network, a Python HA does not run on) the tests
# skip and say why. scripts/test runs this; COMPANION_HA_VENV puts the venv elsewhere.
set -euo pipefail
version=2024.3.3 # the newest release that runs on Python 3.11 (Debian 12, Raspberry Pi OS bookworm)
venv="${COMPANION_HA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/companion-tests/ha-$version}"
[ -e "$venv/.ready" ] && exit 0
# What Home Assistant would pip-install at its first start, installed now so that it runs offline
# with --skip-pip: the requirements of the integrations it always sets up and of those they need.
requirements=(
  paho-mqtt==1.6.1                                 # mqtt
  janus==1.0.0                                     # file_upload (mqtt needs it)
  home-assistant-frontend==20240307.0              # frontend (without it: recovery mode)
  Pillow==10.2.0                                   # image_upload (person)
  psutil-home-assistant==0.0.1                     # hardware, analytics
  securetar==2024.2.1                              # backup
  SQLAlchemy==2.0.27 fnv-hash-fast==0.5.0          # recorder's, imported by analytics
  PyTurboJPEG==1.7.1 numpy==1.26.0                 # camera, which MQTT's camera platform sets up
  josepy==1.14.0                                   # hass-nabucasa's acme needs josepy < 2 (HA does not pin it)
)
echo "building Home Assistant $version in $venv (once)…" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
if "${PYTHON:-python3}" -m venv "$venv" &&
  "$venv/bin/python" -m pip install -q "homeassistant==$version" >&2 &&
  "$venv/bin/python" -m pip install -q -c "$("$venv/bin/python" -c \
    'import homeassistant, os; print(os.path.join(os.path.dirname(homeassistant.__file__), "package_constraints.txt"))')" \
    "${requirements[@]}" >&2; then
  touch "$venv/.ready"
else
  echo "warning: could not install Home Assistant $version; tests/mqtt/test_homeassistant.py will skip" >&2
fi
