"""USB "keyboard" readers through evdev (`hid:<evdev path>`; docs/nfc.md).

Such a reader is a USB keyboard to the kernel: a tag on it types its UID and presses Enter. We open
its event device (`/dev/input/by-id/usb-...-event-kbd`), grab it so the UIDs never type into a
console or a login prompt, and decode the key events with evdev's own `categorize` and key codes.
It sees UIDs only: no card id is read or written (`UID_ONLY`). Readers type the UID differently;
`uid_format` says how this one does, so that its UIDs are the ones every other reader reports:

| `uid_format` | what the reader types for the UID 04 a1 b2 c3 |
|---|---|
| `hex` (default) | `04A1B2C3` |
| `hex-reversed` | `C3B2A104` (the bytes last first) |
| `decimal` | `77705923` (the bytes as one number) |
| `decimal-reversed` | `3283263748` (the bytes last first, as one number: the common "10-digit" readers) |

A keyboard reader says nothing while a card lies on it, and some repeat the UID while it stays: the
same UID again within `debounce` seconds of its last line is the same tap.
evdev is an optional extra (`pip install 'table-companion[keyboard]'`), imported only here.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import select
from pathlib import Path
from typing import Any

from companion.core.config import ConfigError
from companion.readers.base import UID_ONLY, PolledReader, ReaderLost, UidTag

log = logging.getLogger(__name__)

UID_FORMATS = ("hex", "hex-reversed", "decimal", "decimal-reversed")
HEX_KEYS = {f"KEY_{c}": c for c in "0123456789ABCDEF"} | {f"KEY_KP{d}": d for d in "0123456789"}
ENTER_KEYS = ("KEY_ENTER", "KEY_KPENTER")


def uid_from_line(line: str, uid_format: str) -> str | None:
    """The UID (hex, first byte first) that a reader typing `uid_format` means by `line`; None if
    the line is not one (a misread)."""
    try:
        if uid_format.startswith("hex"):
            data = bytes.fromhex(line if len(line) % 2 == 0 else "0" + line)
        else:
            number = int(line, 10)
            size = max(4, (number.bit_length() + 7) // 8)
            size = 7 if 4 < size <= 7 else size  # NFC UIDs are 4, 7 or 10 bytes
            data = number.to_bytes(size, "big")
    except ValueError:
        return None
    if not data:
        return None
    return (data[::-1] if uid_format.endswith("-reversed") else data).hex()


class KeyDecoder:
    """Turns a keyboard reader's key events into the lines it types (digits and A-F up to Enter)."""

    def __init__(self) -> None:
        self._typed: list[str] = []

    def feed(self, event: Any) -> str | None:
        """One evdev `InputEvent`: the line it completes, if it is an Enter press."""
        import evdev

        if event.type != evdev.ecodes.EV_KEY:
            return None
        key = evdev.categorize(event)
        if not isinstance(key, evdev.KeyEvent) or key.keystate != evdev.KeyEvent.key_down:
            return None
        names: Any = key.keycode  # a name, or a list of them for a code with aliases
        code = str(names[0] if isinstance(names, list | tuple) else names)
        if code in ENTER_KEYS:
            line, self._typed = "".join(self._typed), []
            return line
        if code in HEX_KEYS:
            self._typed.append(HEX_KEYS[code])
        # Shift (for A-F) and any other key: nothing to add.
        return None


def open_grabbed(path: str) -> Any:
    """The evdev device at `path`, grabbed (ours alone: UIDs must not type into a console);
    `ReaderLost` saying why not."""
    try:
        import evdev
    except ImportError as error:
        raise ReaderLost(
            f"evdev is not installed ({error}): pip install 'table-companion[keyboard]'"
        ) from None
    try:
        device = evdev.InputDevice(path)
    except FileNotFoundError:
        raise ReaderLost(f"no device at {path} (plugged in? see ls /dev/input/by-id/)") from None
    except PermissionError:
        raise ReaderLost(f"no permission to read {path}: the service user needs the input group") from None
    except OSError as error:
        raise ReaderLost(f"cannot open {path}: {error}") from None
    try:
        device.grab()
    except OSError as error:
        device.close()
        why = "another program holds it" if error.errno == errno.EBUSY else str(error)
        raise ReaderLost(f"cannot grab {path}: {why}") from None
    return device


def probe(device: str) -> Path:
    """The device file of a `hid:` reader, after grabbing and letting it go; `ReaderLost` if it
    cannot be."""
    path = device.partition(":")[2]
    grabbed = open_grabbed(path)
    with contextlib.suppress(OSError):
        grabbed.ungrab()
    grabbed.close()
    return Path(path).resolve()


class KeyboardReader(PolledReader):
    """The keyboard reader at the evdev path after `hid:`, grabbed for the companion alone."""

    kind = "keyboard"
    capabilities = UID_ONLY

    def __init__(
        self, device: str, seat: int | None = None, *, uid_format: Any = "hex", **settings: Any
    ) -> None:
        if uid_format not in UID_FORMATS:
            raise ConfigError(
                f"reader 'uid_format' must be one of {', '.join(UID_FORMATS)}, not {uid_format!r}"
            )
        super().__init__(device, seat, **settings)
        self.path = device.partition(":")[2]
        self.uid_format = str(uid_format)
        self.misreads = 0  # lines that were not a UID
        self._device: Any = None
        self._decoder = KeyDecoder()

    def status(self) -> dict[str, Any]:
        return {
            **super().status(),
            "path": self.path,
            "uid_format": self.uid_format,
            "misreads": self.misreads,
        }

    def _connect(self) -> None:
        self._device = open_grabbed(self.path)
        self._decoder = KeyDecoder()  # a half-typed line from before a replug is lost with it

    def _disconnect(self) -> None:
        device, self._device = self._device, None
        if device is not None:
            with contextlib.suppress(OSError):  # unplugged: the grab went with it
                device.ungrab()
            device.close()

    def _read(self) -> Any:
        """Waits up to `poll_interval` for key events; each completed line is a tag that came and went
        (the tap rule then drops the same UID typed again within `debounce`)."""
        device = self._device
        try:
            ready, _, _ = select.select([device], [], [], self.poll_interval)
            if not ready:
                return None
            lines = [line for event in device.read() if (line := self._decoder.feed(event)) is not None]
        except BlockingIOError:  # woken, but the events were taken already
            return None
        except OSError as error:  # ENODEV: unplugged
            raise ReaderLost(f"{self.path}: {error.strerror or error}") from None
        for line in lines:
            uid = uid_from_line(line, self.uid_format)
            if uid is None:
                self.misreads += 1
                log.warning("keyboard reader %s typed %r: not a UID in %s", self.path, line, self.uid_format)
            else:
                self._seen(UidTag(uid))
        return None  # a typed UID is there for an instant: it has "left" again at once
