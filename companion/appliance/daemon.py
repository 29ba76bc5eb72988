"""Puts the parts together: journal, table, engines, readers, pins, the event broker and the web."""

from __future__ import annotations

import contextlib
import logging
import shlex
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpiozero import Device
from gpiozero.exc import GPIOZeroError

from companion.core.config import Config, ConfigError
from companion.core.cues import Cue
from companion.games.base import GameError
from companion.games.packs import Pack, playable_games
from companion.pins.board import PinChoice, fail_pins, open_pins
from companion.pins.buttons import TableButtons
from companion.pins.devices import PinLayout
from companion.pins.feedback import Feedback
from companion.pins.patterns import PATTERNS
from companion.readers import Reader
from companion.readers.enrollment import CardDesk
from companion.readers.known import KnownTags
from companion.readers.registry import Registry, registry_path
from companion.table.journal import Journal, JournalError
from companion.table.table import Table
from companion.webapp.app import create_app
from companion.webapp.events import Broker
from companion.webapp.pairing import Pairing

if TYPE_CHECKING:
    from companion.mqtt.bridge import MqttBridge
    from companion.network.hotspot import Hotspot

log = logging.getLogger(__name__)

# What to do when the power-off command fails as the service user (docs/operations.md).
POWER_OFF_FIX = (
    "the service user needs the polkit rule systemd/companion-poweroff.rules in "
    "/etc/polkit-1/rules.d/ (see docs/operations.md), or set [pins] power_off_command"
)


class Daemon:
    """Everything one running companion needs, built from a Config; `close()` releases it all.

    `demo` (`companion demo`): the power-off gesture is refused with a message, nothing is run."""

    def __init__(self, config: Config, demo: bool = False) -> None:
        self.config = config
        self.demo = demo
        self.powering_off = threading.Event()  # Next and Undo were held: serve() runs the command
        self.stop: Callable[[], None] = lambda: None  # ends serve(); set by it
        self.layout = layout = PinLayout.of(config)  # checked first: no button or LED on the reader's UART
        engines, packs = playable_games()  # the shipped games and those of COMPANION_GAME_PACKS
        self.catalog = {game: engine.data for game, engine in engines.items()}  # games that can be played
        self.journal = open_journal(config.db)
        self.registry = Registry.for_daemon(registry_path(config))  # UID -> card, for tags without an id
        try:
            self.table = Table(self.journal, engines, resolve_uid=self.registry.lookup)
            self.journal.verify()  # once, after the table archived finished games: about one game long
        except sqlite3.DatabaseError as error:
            self.journal.close()
            raise JournalError(unusable_journal(config.db, error)) from None
        self.feedback, self.buttons = self._open_pins(layout)
        try:
            self._wire(config, packs)
        except BaseException:
            # A bad [reader] or [network] table: let go of the pins' threads and the files now, or
            # gpiozero's finalizers start threads at interpreter exit and `companion run` never ends.
            self.buttons.close()
            self.feedback.close()
            self.journal.close()
            self.registry.close()
            raise

    def _wire(self, config: Config, packs: dict[str, Pack]) -> None:
        """What sits on the table and its pins: the screens, the readers, the web app, MQTT."""
        # Pins first, then screens: the buzzer gets its cue before any stream thread is woken.
        self.table.listeners.append(self.feedback)
        self.table.first_step = self.feedback.first_step  # the buzzer's first step on the table's thread
        self.broker = Broker(capacity=config.scoreboards, per_address=config.streams_per_address)
        self.table.listeners.append(self.broker)
        # Verified UIDs, shared by every reader; a registry write (an enrollment, an import, here or
        # by `companion cards` beside the service) forgets them all (docs/nfc.md, "Known tags").
        self.known = KnownTags(stamp=self.registry.generation)
        self.readers: list[Reader] = open_readers(config, self.table.announce, self.known)
        self.cards = CardDesk(self.registry, self.catalog, self.readers, self.table.announce)
        self.network = hotspot(config)  # [network]: the table's own Wi-Fi when there is none, or None
        self.app = create_app(
            self.table,
            self.broker,
            self.catalog,
            config.token,
            health=self.health,
            hosts=config.hosts,
            cards=self.cards,
            packs=packs,
            # Control devices paired with a code (companion.webapp.pairing), remembered beside the journal.
            pairing=Pairing(config.db.parent / "paired-devices.json"),
            buttons=self.buttons,  # POST /api/buttons presses them when they are on mock pins
            network=self.network,
        )
        self.mqtt = mqtt_bridge(config, self.table)  # [mqtt]: the table on a broker, or None

    def _open_pins(self, layout: PinLayout) -> tuple[Feedback, TableButtons]:
        """The LEDs, buzzer and buttons. On a Raspberry Pi pins that cannot be opened are never a
        quiet mock: `self.pins` says "unavailable" and why (companion.pins.board), /healthz is not ok."""
        self.pins = open_pins(layout, self.config.mock_pins, self.config.db.parent)
        try:
            built = self._build_pins(layout, self.pins)
        except GPIOZeroError as error:  # a pin name gpiozero does not know on this board
            raise ConfigError(f"[pins]: {error}") from None
        except Exception as error:  # the pin library's own: a line busy, the chip gone
            if self.pins.name in ("mock", "unavailable"):
                raise
            with contextlib.suppress(Exception):  # let go of the chip before mock pins stand in
                self.pins.factory.close()
            self.pins = fail_pins(f"{type(error).__name__}: {error}")
            built = self._build_pins(layout, self.pins)
        # A reader library that makes its own gpiozero devices (the RC522's reset pin) gets these pins.
        Device.pin_factory = self.pins.factory
        return built

    def _build_pins(self, layout: PinLayout, pins: PinChoice) -> tuple[Feedback, TableButtons]:
        feedback = Feedback(layout, self.config.sound, pin_factory=pins.factory)
        try:
            buttons = TableButtons(self.table, layout, pin_factory=pins.factory, power_off=self.power_off)
        except BaseException:
            feedback.close()
            raise
        return feedback, buttons

    @property
    def gpio(self) -> str:
        """The pins in use, as /healthz says: "lgpio", ..., "mock", or "unavailable"."""
        return self.pins.name

    def power_off(self) -> None:
        """Next and Undo held together (companion.pins.buttons): the power-off cue, then serve()
        stops the daemon (journal closed) and runs `[pins] power_off_command`. In the demo: refused."""
        if self.demo:
            self.table.report_error("Power-off is off in the demo: nothing was shut down.")
            return
        if self.powering_off.is_set():
            return
        self.powering_off.set()
        log.warning("power-off: the table stops, then runs %s", shlex.join(self.layout.power_off_command))
        self.table.announce(Cue("power-off", text="Powering off. Unplug once every light is out."))
        self.feedback.wait_idle(timeout=PATTERNS["power-off"].seconds + 2)  # heard before the pins close
        self.stop()

    def start(self) -> None:
        if self.mqtt is not None:
            self.mqtt.start()
        if self.network is not None:
            self.network.start()
        for reader in self.readers:
            reader.start(self.tap)
        self.feedback(kind="state", payload=self.table.view())

    def tap(self, card: str | None = None, uid: str | None = None, seat: int | None = None) -> None:
        """A reader's tap. A refused one has already played its error cue; the reader goes on."""
        try:
            self.table.tap(card=card, uid=uid, seat=seat)
        except GameError as error:
            log.info("tap refused: %s", error)

    def health(self) -> dict[str, Any]:
        readers = [reader.status() for reader in self.readers]
        return {
            "readers": readers,
            "reader": "ok" if all(r["connected"] for r in readers) else "lost",
            "gpio": self.gpio,
            # A Raspberry Pi whose pins could not be opened: why, and the fix (/healthz not ok).
            **({"gpio_error": self.pins.error} if self.pins.error else {}),
            "sse_clients": self.broker.clients,
            "journal_read_only": self.journal.read_only,  # a disk gone read-only: every input refused
            **self.cards.health(),  # the card registry: "ok", or damaged / read-only and why
            **({} if self.mqtt is None else {"mqtt": "connected" if self.mqtt.connected else "away"}),
            # mode, SSID and clients, never the password: /healthz is open to the table's network
            **({} if self.network is None else {"network": self.network.status()}),
        }

    def close(self) -> None:
        for reader in self.readers:
            reader.stop()
        self.broker.close()
        self.buttons.close()
        self.feedback.close()
        if self.mqtt is not None:
            self.mqtt.close()
        if self.network is not None:
            self.network.close()
        self.journal.close()
        self.registry.close()


def run_power_off(command: Sequence[str]) -> int:
    """Run the power-off command once the daemon has closed everything: 0 when it ran, else 1
    (under systemd the table then restarts: better on than silently half off)."""
    shown = shlex.join(command)
    log.warning("power-off: the journal is closed; running %s", shown)
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        log.error("power-off: %s could not run (%s); fix: %s", shown, error, POWER_OFF_FIX)
        return 1
    if done.returncode != 0:
        why = done.stderr.strip() or f"exit status {done.returncode}"
        log.error("power-off: %s failed (%s); fix: %s", shown, why, POWER_OFF_FIX)
        return 1
    return 0


def open_journal(path: Path) -> Journal:
    """The journal, or one line naming the file and why it cannot be used."""
    try:
        return Journal(path)
    except sqlite3.DatabaseError as error:
        raise JournalError(unusable_journal(path, error)) from None


def unusable_journal(path: Path, error: Exception) -> str:
    return (
        f"{path}: not a journal this version can use ({error}): move it away to start a new one, "
        "or point [journal] path at the right file"
    )


def mqtt_bridge(config: Config, table: Table) -> MqttBridge | None:
    """The table's publisher to the broker of [mqtt] (docs/mqtt.md), listening to the table."""
    if config.mqtt is None:
        return None
    from companion.mqtt.bridge import MqttBridge, outbox_path

    bridge = MqttBridge(config.mqtt, table, outbox_path(config.db))
    table.listeners.append(bridge)
    return bridge


def hotspot(config: Config) -> Hotspot | None:
    """The access point's watcher of [network] (companion.network.hotspot), or None without it."""
    if config.network is None:
        return None
    from companion.network.hotspot import Hotspot
    from companion.network.wifi import state_path

    try:
        return Hotspot(config.network, state_path(config))
    except OSError as error:  # network.json: unreadable, or its folder not writable
        raise ConfigError(f"[network]: {error}") from None


def open_readers(
    config: Config, announce: Callable[[Cue], None] | None = None, known: KnownTags | None = None
) -> list[Reader]:
    """The readers the config asks for, each of the family its device's scheme names ("virtual"
    the virtual mat, "auto" the first reader found, else the virtual mat); see docs/nfc.md.
    `announce` plays their reader-lost / reader-back cues; `known` is their shared known-tag cache."""
    from companion.readers.families import readers_from_config  # each family's library on demand

    return readers_from_config(config.readers, announce, known)
