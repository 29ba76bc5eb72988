"""A USB keyboard reader at evdev's device boundary, for tests (there is no /dev/uinput here).

`RecordedKeyboard` is an evdev `EventIO` (the class `InputDevice` reads events with) whose file
descriptor is a pipe fed with raw `struct input_event` records, the bytes the kernel hands out on
/dev/input/eventN: evdev's own C reader (`device_read_many`) decodes them into `InputEvent`s, and the
companion's decoding (`evdev.categorize`, `evdev.ecodes`) runs as on a Pi. What a reader types is
recorded as a real one types it: for each key a scan code (EV_MSC), the key down, a report end
(EV_SYN), then the key up and a report end; Shift around A-F. Only opening the device (ioctls a pipe
has not) and grabbing it are stood in for: `grab()` records the grab, `unplug()` makes every read
fail with ENODEV as the kernel does for a device that is gone, and `Keyboards` stands in for
`evdev.InputDevice(path)`, which raises FileNotFoundError while the reader is unplugged.
"""

from __future__ import annotations

import errno
import os
import struct
import time
from collections.abc import Iterator
from typing import Any

import evdev
from evdev import ecodes
from evdev.eventio import EventIO

EVENT = struct.Struct("llHHi")  # struct input_event on a 64-bit Linux: timeval, type, code, value
SCAN_BASE = 0x70000  # USB HID usage page 7 (keyboard), as MSC_SCAN reports it


def key_events(text: str, *, repeat: bool = False) -> list[tuple[int, int, int]]:
    """(type, code, value) records for typing `text` and Enter; `repeat` adds an autorepeat (value
    2) on each key, as a reader that holds keys down too long sends."""
    records: list[tuple[int, int, int]] = []
    for char in [*text, "\n"]:
        name = "KEY_ENTER" if char == "\n" else f"KEY_{char.upper()}"
        code = ecodes.ecodes[name]
        shift = char.isalpha() and char.isupper()
        if shift:
            records += [(ecodes.EV_KEY, ecodes.KEY_LEFTSHIFT, 1), (ecodes.EV_SYN, ecodes.SYN_REPORT, 0)]
        records += [(ecodes.EV_MSC, ecodes.MSC_SCAN, SCAN_BASE + code), (ecodes.EV_KEY, code, 1)]
        records += [(ecodes.EV_SYN, ecodes.SYN_REPORT, 0)]
        if repeat:
            records += [(ecodes.EV_KEY, code, 2), (ecodes.EV_SYN, ecodes.SYN_REPORT, 1)]
        records += [(ecodes.EV_MSC, ecodes.MSC_SCAN, SCAN_BASE + code), (ecodes.EV_KEY, code, 0)]
        records += [(ecodes.EV_SYN, ecodes.SYN_REPORT, 0)]
        if shift:
            records += [(ecodes.EV_KEY, ecodes.KEY_LEFTSHIFT, 0), (ecodes.EV_SYN, ecodes.SYN_REPORT, 0)]
    return records


class RecordedKeyboard(EventIO):
    """One keyboard reader: what it types arrives through evdev's own event reading."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = "Recorded 13.56 MHz keyboard reader"
        self.fd, self._writer = os.pipe()
        os.set_blocking(self.fd, False)
        self.grabbed = False
        self.plugged = True

    def type(self, text: str, *, repeat: bool = False) -> None:
        now = time.time()
        sec, usec = int(now), int(now % 1 * 1_000_000)
        data = b"".join(EVENT.pack(sec, usec, *record) for record in key_events(text, repeat=repeat))
        os.write(self._writer, data)

    def read(self) -> Iterator[evdev.InputEvent]:
        if not self.plugged:
            raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
        return super().read()

    def grab(self) -> None:
        if self.grabbed:
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
        self.grabbed = True

    def ungrab(self) -> None:
        if not self.plugged:
            raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
        self.grabbed = False

    def close(self) -> None:
        self.grabbed = False  # a closed descriptor holds no grab (the pipe stays: the reader's cable)

    def unplug(self) -> None:
        self.plugged = False
        os.write(self._writer, EVENT.pack(0, 0, ecodes.EV_SYN, ecodes.SYN_REPORT, 0))  # wake the reader

    def plug(self) -> None:
        self.plugged = True
        os.set_blocking(self.fd, False)
        while True:  # what was in flight when it was pulled out is gone with it
            try:
                if not os.read(self.fd, 4096):
                    break
            except BlockingIOError:
                break


class Keyboards:
    """`evdev.InputDevice` for the test: the recorded readers by path."""

    def __init__(self, *keyboards: RecordedKeyboard) -> None:
        self.by_path = {keyboard.path: keyboard for keyboard in keyboards}

    def __call__(self, path: str) -> Any:
        keyboard = self.by_path.get(path)
        if keyboard is None or not keyboard.plugged:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return keyboard
