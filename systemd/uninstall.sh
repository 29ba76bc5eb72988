#!/usr/bin/env bash
# Remove what systemd/install.sh installed.
#
#   sudo ./systemd/uninstall.sh            stops and removes the service, the venv, the udev rules,
#                                          the blacklist, the polkit rules and the hotspot's
#                                          NetworkManager files; keeps the journal and the config
#   sudo ./systemd/uninstall.sh --purge    also deletes the journal, the config and the user
#
#   ./systemd/uninstall.sh --dry-run       (or DESTDIR=/some/folder) works on a staging folder made
#                                          by `install.sh --dry-run`, and only prints the commands
set -euo pipefail

PREFIX=/opt/companion
CONF_DIR=/etc/companion
STATE_DIR=/var/lib/companion
UNIT=/etc/systemd/system/companion.service
MANIFEST=$PREFIX/installed-files
SERVICE_USER=companion
PURGE=0
DESTDIR=${DESTDIR:-}
DRY_RUN=0
[ -n "$DESTDIR" ] && DRY_RUN=1

while [ $# -gt 0 ]; do
	case $1 in
	--purge) PURGE=1 ;;
	--dry-run) DRY_RUN=1 ;;
	-h | --help)
		sed -n '2,11s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*)
		echo "uninstall.sh: unknown option $1" >&2
		exit 2
		;;
	esac
	shift
done
if [ "$DRY_RUN" = 1 ] && [ -z "$DESTDIR" ]; then
	echo "uninstall.sh: a dry run needs DESTDIR=<the staging folder of install.sh --dry-run>" >&2
	exit 2
fi

say() { printf 'uninstall: %s\n' "$*"; }
run() { # in a dry run, show the command shell-quoted, as install.sh does
	if [ "$DRY_RUN" = 1 ]; then
		printf '+'
		printf ' %q' "$@"
		printf '\n'
	else
		"$@"
	fi
}

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
	echo "uninstall.sh: run it as root: sudo $0" >&2
	exit 1
fi

# Stop it first: the journal must be closed cleanly before anything else goes.
run systemctl disable --now companion || true

udev=0
if [ -f "$DESTDIR$MANIFEST" ]; then
	while IFS= read -r file; do
		case $file in
		/*) ;;
		*) continue ;; # only absolute paths, whatever the file says
		esac
		case $file in /etc/udev/*) udev=1 ;; esac
		rm -f "$DESTDIR$file"
	done <"$DESTDIR$MANIFEST"
fi
rm -f "$DESTDIR$UNIT"
rm -rf "$DESTDIR$PREFIX"
run systemctl daemon-reload || true
if [ "$udev" = 1 ]; then
	run udevadm control --reload-rules || true
fi

if [ "$PURGE" = 1 ]; then
	rm -rf "$DESTDIR$CONF_DIR" "$DESTDIR$STATE_DIR"
	if getent passwd "$SERVICE_USER" >/dev/null || [ "$DRY_RUN" = 1 ]; then
		run userdel "$SERVICE_USER" || true
	fi
	say "removed the service, its journal, its config and its user"
else
	say "removed the service; kept the journal in $STATE_DIR and the config in $CONF_DIR"
	say "(back the journal up, or delete both with: sudo $0 --purge)"
fi
