#!/usr/bin/env bash
# Install Table Companion as a service on Raspberry Pi OS (any Debian with systemd works too).
#
#   sudo ./systemd/install.sh [--port N] [--no-apt] [--pcsc] [--pn532] [--rc522]
#
# From a checkout of the project: installs the package into its own virtual environment in
# /opt/companion, writes /etc/companion/companion.toml with a random control token (only if there is
# none yet), installs the unit, the udev rules and the modprobe blacklist from hardware/, enables and
# starts the service, and prints the scoreboard's address with a QR code for the tablet. --pcsc also
# installs pcscd, for a PC/SC reader (ACR122U, ACR1252U, Omnikey: `pcsc:` in docs/nfc.md); --pn532
# Adafruit's PN532 driver and Blinka into the venv, for a PN532 board on I2C or SPI (`pn532:`); --rc522
# Joy-IT's RC522 library and spidev, for an RC522 board on SPI (`rc522:`).
# It also installs the polkit rules of the power-off hold and of the hotspot, and the hotspot's
# NetworkManager files (systemd/companion-*). Running it again upgrades the table in place: the
# package, the unit, the rules; the config, the journal and its archive, the card registry, the
# outbox and the paired devices are kept; the service is restarted once. On Raspberry Pi OS
# gpiozero and lgpio come from apt (the venv sees them).
#
#   ./systemd/install.sh --dry-run            (or DESTDIR=/some/folder ./systemd/install.sh)
#
# writes every file under a staging folder instead of / and only prints the commands that would
# change the system (user, venv, systemctl, udevadm); with --venv it also really makes the venv and
# installs the package into it, under the staging folder. The tests use it; see docs/operations.md.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=/opt/companion
CONF_DIR=/etc/companion
CONF=$CONF_DIR/companion.toml
STATE_DIR=/var/lib/companion
UNIT=/etc/systemd/system/companion.service
UDEV_DIR=/etc/udev/rules.d
MODPROBE_DIR=/etc/modprobe.d
POLKIT_DIR=/etc/polkit-1/rules.d
NM_DIR=/etc/NetworkManager
LINK=/usr/local/bin/companion
MANIFEST=$PREFIX/installed-files # what uninstall.sh removes besides the venv and the unit
SERVICE_USER=companion
# gpio: /dev/gpiochip* and /dev/gpiomem (the pins); plugdev: USB readers (the udev rule);
# dialout: serial readers (a PN532 on the UART); input: USB keyboard readers (`hid:`, whose event
# devices Debian gives to the input group); i2c and spi: a PN532 board on I2C (`pn532:i2c1`) or SPI
# (`pn532:spi0.0`, `rc522:`; gpio for the RC522's reset pin). Only the groups that exist on this system
# are used.
DEVICE_GROUPS=(gpio plugdev dialout input i2c spi)
PORT=8000
APT=1
PCSC=0
PN532=0
RC522=0
DESTDIR=${DESTDIR:-}
DRY_RUN=0
[ -n "$DESTDIR" ] && DRY_RUN=1
VENV=0 # a dry run that makes the venv for real, under $DESTDIR
# What says this is Raspberry Pi OS on a Pi (the tests point these at files of their own).
OS_RELEASE=${COMPANION_OS_RELEASE:-/etc/os-release}
DT_MODEL=${COMPANION_DT_MODEL:-/proc/device-tree/model}

usage() {
	sed -n '2,23s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--port)
		PORT=${2:?--port needs a number}
		shift
		;;
	--no-apt) APT=0 ;;
	--pcsc) PCSC=1 ;;
	--pn532) PN532=1 ;;
	--rc522) RC522=1 ;;
	--dry-run) DRY_RUN=1 ;;
	--venv) VENV=1 ;;
	-h | --help) usage 0 ;;
	*)
		echo "install.sh: unknown option $1" >&2
		usage 2
		;;
	esac
	shift
done
case $PORT in
'' | *[!0-9]*)
	echo "install.sh: --port must be a number" >&2
	exit 2
	;;
esac
if [ "$DRY_RUN" = 1 ] && [ -z "$DESTDIR" ]; then
	DESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/companion-install.XXXXXX")
fi

say() { printf 'install: %s\n' "$*"; }
# A command that changes the system: run it, or in a dry run only show it, shell-quoted so that the
# line shown can be pasted (--comment Table\ Companion).
run() {
	if [ "$DRY_RUN" = 1 ]; then
		printf '+'
		printf ' %q' "$@"
		printf '\n'
	else
		"$@"
	fi
}
# The venv's commands: shown like the others, and also run (under $DESTDIR) in a dry run with --venv.
venv() {
	if [ "$DRY_RUN" = 1 ] && [ "$VENV" = 1 ]; then
		printf '+'
		printf ' %q' "$@"
		printf '\n'
		local first=$1
		shift
		case $first in
		/*) "$DESTDIR$first" "$@" ;;
		*) "$first" "${@/#$PREFIX/$DESTDIR$PREFIX}" ;;
		esac
	else
		run "$@"
	fi
}
# Raspberry Pi OS on a Raspberry Pi: its device tree names the board, its os-release the system
# (Raspbian for the 32-bit images; the 64-bit ones say Debian, with Raspberry Pi's own apt sources).
raspberry_pi_os() {
	[ -r "$DT_MODEL" ] && tr -d '\0' <"$DT_MODEL" | grep -q '^Raspberry Pi' || return 1
	[ -r "$OS_RELEASE" ] && grep -Eq '^(ID|ID_LIKE)=.*(raspbian|debian)' "$OS_RELEASE"
}
PI_OS=0
raspberry_pi_os && PI_OS=1
# Files always go under $DESTDIR (empty for a real install).
put() { # put MODE SOURCE TARGET
	install -D -m "$1" "$2" "$DESTDIR$3"
	echo "$3" >>"$DESTDIR$MANIFEST.new"
}

if [ "$DRY_RUN" = 1 ]; then
	say "dry run: files go under $DESTDIR, commands are only shown"
else
	[ "$(id -u)" = 0 ] || {
		echo "install.sh: run it as root: sudo $0" >&2
		exit 1
	}
	command -v systemctl >/dev/null || {
		echo "install.sh: systemd is needed (systemctl not found)" >&2
		exit 1
	}
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
	echo "install.sh: Python 3.11 or newer is needed (Raspberry Pi OS bookworm has it)" >&2
	exit 1
}

# 1. System packages: venv, lgpio for the pins (Raspberry Pi OS ships it; plain Debian does not),
# libusb for nfcpy's USB readers (without it no USB reader is ever found), Debian's builds of pyscard
# and evdev for PC/SC and keyboard readers (the venv sees them), and pcscd for a PC/SC reader (--pcsc,
# or a config that names one: pcscd takes every CCID reader, an ACR122U too, away from nfcpy).
if [ -e "$DESTDIR$CONF" ] && grep -q '^[^#]*"pcsc:' "$DESTDIR$CONF"; then PCSC=1; fi
if [ -e "$DESTDIR$CONF" ] && grep -q '^[^#]*"pn532:' "$DESTDIR$CONF"; then PN532=1; fi
if [ -e "$DESTDIR$CONF" ] && grep -q '^[^#]*"rc522:' "$DESTDIR$CONF"; then RC522=1; fi
packages=(python3-venv python3-lgpio libusb-1.0-0 python3-pyscard python3-evdev)
# gpiozero from Raspberry Pi OS, not PyPI's 2.0.1, which looks for gpiochip4 on a Pi 5 where kernels
# from 6.6.45 number the header's chip gpiochip0 (the pins would fall back to mock).
[ "$PI_OS" = 1 ] && packages+=(python3-gpiozero)
# polkitd: the rules that let the service power the Pi off (the Next + Undo hold) and steer
# NetworkManager for its own Wi-Fi; nftables: the hotspot's port-80 redirect to the scoreboard.
packages+=(polkitd nftables)
[ "$PCSC" = 1 ] && packages+=(pcscd)
[ "$RC522" = 1 ] && packages+=(gcc python3-dev) # spidev builds from source where no wheel is served
if [ "$APT" = 1 ] && command -v apt-get >/dev/null; then
	missing=()
	for package in "${packages[@]}"; do
		dpkg -s "$package" >/dev/null 2>&1 && continue
		if [ "$package" = python3-lgpio ] && ! apt-cache show "$package" >/dev/null 2>&1; then
			say "python3-lgpio is not packaged here (not Raspberry Pi OS?): the pins may fall back to mock"
			continue
		fi
		if [ "$package" = polkitd ] && ! apt-cache show "$package" >/dev/null 2>&1; then
			say "polkitd is not packaged here (older than bookworm?): install policykit-1 for the power-off hold"
			continue
		fi
		missing+=("$package")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		run apt-get update
		run apt-get install -y --no-install-recommends "${missing[@]}"
	fi
fi

# 2. The service user, in the device groups.
if ! getent passwd "$SERVICE_USER" >/dev/null; then
	run useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
		--shell /usr/sbin/nologin --comment "Table Companion" "$SERVICE_USER"
fi
for group in "${DEVICE_GROUPS[@]}"; do
	if getent group "$group" >/dev/null; then
		run usermod -aG "$group" "$SERVICE_USER"
	else
		say "no group $group on this system: skipped"
	fi
done

# 3. The package in its own virtual environment. --system-site-packages lets it see lgpio from apt.
mkdir -p "$DESTDIR$PREFIX"
: >"$DESTDIR$MANIFEST.new"
# (Run again over an older venv, it rewrites its pyvenv.cfg: the flag holds after an upgrade too.)
venv python3 -m venv --system-site-packages "$PREFIX"
if [ "$PI_OS" = 1 ]; then
	say "Raspberry Pi OS: gpiozero and lgpio from apt (python3-gpiozero, python3-lgpio)"
	# A gpiozero an earlier install took from PyPI into the venv would hide apt's: out with it (pip
	# leaves the system's copy alone, outside the venv).
	venv "$PREFIX/bin/pip" uninstall --yes --quiet gpiozero lgpio
fi
wanted=()
[ "$PN532" = 1 ] && wanted+=(pn532)
[ "$RC522" = 1 ] && wanted+=(rc522)
extras=""
[ ${#wanted[@]} -gt 0 ] && extras="[$(
	IFS=,
	echo "${wanted[*]}"
)]"
# only-if-needed: a dependency already satisfied (apt's gpiozero on Raspberry Pi OS) is kept.
venv "$PREFIX/bin/pip" install --no-cache-dir --upgrade --upgrade-strategy only-if-needed "$SRC$extras"
put 644 "$SRC/docs/operations.md" "$PREFIX/share/doc/operations.md"
mkdir -p "$DESTDIR$(dirname "$LINK")"
ln -sfn "$PREFIX/bin/companion" "$DESTDIR$LINK"
echo "$LINK" >>"$DESTDIR$MANIFEST.new"

# 4. The config, with a random token, readable by root and the service only. Never overwritten.
install -d -m 750 "$DESTDIR$CONF_DIR"
run chown "root:$SERVICE_USER" "$CONF_DIR"
if [ -e "$DESTDIR$CONF" ]; then
	say "kept the existing config $CONF"
	[ "$PORT" = 8000 ] || say "--port ignored: change port in [server] of $CONF instead"
else
	token=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
	# The reader plugged in now, named in the config: "auto" would search again at every start
	# (and could pick another one). The package was just installed; a dry run has no venv to ask.
	device=auto
	finder=$DESTDIR$PREFIX/bin/python
	if [ -x "$finder" ] && found=$("$finder" -m companion.readers.families 2>/dev/null) && [ -n "$found" ]; then
		device=$found
		say "found a reader at $device: written into $CONF"
	fi
	(
		umask 027
		cat >"$DESTDIR$CONF" <<EOF
# Table Companion settings (docs/configuration.md of the project). After a change:
#   sudo systemctl restart companion
[server]
host = "0.0.0.0"
port = $PORT
# The control token: the control page and the API need it. Keep it to the table's host.
token = "$token"

[journal]
# The service may only write under $STATE_DIR (ProtectSystem=strict).
path = "$STATE_DIR/journal.db"

[reader]
# The reader found when this file was written, or "auto": a PC/SC reader pcscd lists, a USB reader
# (a PN532 on the UART of a Pi) or a PN532 on I2C bus 1 if one is found, else the virtual reader
# (taps from the control page) until one is plugged in. Keyboard readers and SPI boards are named:
# device = "hid:/dev/input/by-id/..." or "pn532:spi0.0".
device = "$device"
EOF
	)
	chmod 640 "$DESTDIR$CONF"
	run chown "root:$SERVICE_USER" "$CONF"
	say "wrote $CONF with a new control token"
fi

# 5. The unit, the udev rules and the modprobe blacklist (whatever hardware/ ships).
put 644 "$SRC/systemd/companion.service" "$UNIT"
shopt -s nullglob
rules=("$SRC"/hardware/udev/*.rules)
shopt -u nullglob
for rule in "${rules[@]}"; do
	put 644 "$rule" "$UDEV_DIR/$(basename "$rule")"
done
blacklists=()
if [ -d "$SRC/hardware" ]; then
	while IFS= read -r -d '' conf; do blacklists+=("$conf"); done \
		< <(find "$SRC/hardware" -name '*.conf' -type f -print0 | sort -z)
fi
for conf in "${blacklists[@]}"; do
	put 644 "$conf" "$MODPROBE_DIR/$(basename "$conf")"
done
# The polkit rules (power-off at the table; the hotspot's NetworkManager calls), and the hotspot's
# probe names and port-80 redirect for NetworkManager (docs/operations.md). Inert without [network].
put 644 "$SRC/systemd/companion-poweroff.rules" "$POLKIT_DIR/50-companion-poweroff.rules"
put 644 "$SRC/systemd/companion-network.rules" "$POLKIT_DIR/50-companion-network.rules"
put 644 "$SRC/systemd/companion-hotspot-dnsmasq.conf" "$NM_DIR/dnsmasq-shared.d/companion.conf"
put 755 "$SRC/systemd/companion-hotspot-dispatcher" "$NM_DIR/dispatcher.d/90-companion-hotspot"
# Files an earlier install put there that this checkout no longer ships.
if [ -f "$DESTDIR$MANIFEST" ]; then
	while IFS= read -r old; do
		grep -qxF "$old" "$DESTDIR$MANIFEST.new" || rm -f "$DESTDIR$old"
	done <"$DESTDIR$MANIFEST"
fi
mv "$DESTDIR$MANIFEST.new" "$DESTDIR$MANIFEST"
if [ ${#rules[@]} -gt 0 ]; then
	run udevadm control --reload-rules
	run udevadm trigger --action=add --subsystem-match=usb --subsystem-match=tty
fi
if [ ${#blacklists[@]} -gt 0 ]; then
	# The kernel's NFC drivers hold a USB reader that nfcpy needs: unload those loaded now (the
	# blacklist keeps them away from the next boot on).
	loaded=()
	for module in port100 pn533_usb pn533 nfc; do
		if [ -d "/sys/module/$module" ]; then loaded+=("$module"); fi
	done
	if [ ${#loaded[@]} -gt 0 ]; then
		run modprobe -r "${loaded[@]}" || say "could not unload ${loaded[*]}: reboot once"
	fi
fi

# 6. Start it (again, to run the new code) and show where the tablet goes.
run systemctl daemon-reload
run systemctl enable companion
run systemctl restart companion
if [ "$DRY_RUN" = 0 ] && ! systemctl is-active --quiet companion; then
	echo "install.sh: the service did not start: journalctl -u companion -b; sudo companion doctor" >&2
	exit 1
fi
# 7. Doctor's look at what was installed (an upgraded table too): its lines, and a word if one FAILs.
run "$PREFIX/bin/companion" doctor --config "$CONF" || say "doctor found a problem: see its lines above"
say "installed: the service runs, starts at boot and restarts after a crash"
say "check it:  sudo companion doctor      logs:  journalctl -u companion -f"
say "the control page (with the token):  sudo companion url --control"
run "$PREFIX/bin/companion" url --config "$CONF"
