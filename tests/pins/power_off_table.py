"""`companion run` on mock pins whose Next and Undo a thread holds down once the table listens: the
power-off test's table, in a process of its own, since the gesture ends the process.

    python tests/pins/power_off_table.py CONFIG PORT
"""

from __future__ import annotations

import sys
import threading
import time
import urllib.request

from gpiozero import Device

from companion.appliance.cli import main
from companion.pins.devices import DEFAULT_PINS


def hold_next_and_undo(port: int) -> None:
    """Once /healthz answers (the daemon and its pins are built), push both buttons and keep them down."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                break
        except OSError:
            time.sleep(0.05)
    factory = Device.pin_factory  # the daemon's MockFactory
    factory.pin(DEFAULT_PINS["next_button"]).drive_low()  # buttons pull up: pressed = low
    factory.pin(DEFAULT_PINS["undo_button"]).drive_low()


if __name__ == "__main__":
    config, port = sys.argv[1], sys.argv[2]
    threading.Thread(target=hold_next_and_undo, args=(int(port),), daemon=True).start()
    sys.exit(main(["run", "--config", config, "--host", "127.0.0.1", "--port", port, "--mock-pins"]))
