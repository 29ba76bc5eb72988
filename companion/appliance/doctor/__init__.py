"""`companion doctor` checks what the table needs and says what to fix.

Doctor never changes anything: it reads the config, opens the journal read-only (no checkpoint, no
recovery written), binds the port only to see whether it is free, and asks a companion already
listening there for its /healthz. One line per check, `ok`, `warn` or `FAIL`, each FAIL or warn with
its fix; the exit status is 1 when anything FAILed. See docs/operations.md.

The checks, by what they look at: the journal, the free space, the overlay file system and the card
registry (`storage`); the card readers, as a running companion reports them or looked at here
(`readers`); the config and its token, the port, the pins and the systemd service (`system`); the
table's own Wi-Fi (`network`). Each says what it found in a `Check` (`report`); `command` is the
`companion doctor` command and runs them all in order (`run_checks`).
"""

from companion.appliance.doctor.command import add_doctor_command, common_arguments, run_checks
from companion.appliance.doctor.report import Check

__all__ = ["Check", "add_doctor_command", "common_arguments", "run_checks"]
