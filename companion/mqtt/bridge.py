"""The table on MQTT (docs/mqtt.md): its public view, cues, results and presence, on a broker.

`MqttBridge` is a table listener. The table calls it under its lock, so it only hands messages to
its own thread, which talks to the broker; a broker that is slow or away never slows the table.
The one thing done at once is storing a finished round or game in the outbox (a local SQLite
write, only when a result appears or an undo takes one back), so that no result is ever lost.
paho-mqtt's network thread connects, and reconnects with a growing delay (1 s to 30 s).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import sqlite3
import threading
from pathlib import Path
from typing import Any

from companion.core.config import MqttSettings
from companion.mqtt.homeassistant import discovery_messages
from companion.mqtt.outbox import Outbox
from companion.mqtt.results import game_id, results_of, retraction
from companion.table.table import Table

log = logging.getLogger(__name__)

QUEUE_SIZE = 1000  # messages waiting for the broker thread; past that, cues are dropped (the table goes on)
RECONNECT_DELAY = (1, 30)  # seconds: the first retry, and the longest wait between retries


def make_client(
    settings: MqttSettings, client_id: str, will_topic: str | None = None, persistent: bool = False
) -> Any:
    """A paho-mqtt client for `settings` (TLS, login, last will), not yet connected. A `persistent`
    session has the broker keep QoS 1 messages for it while it is away."""
    import paho.mqtt.client as paho  # loaded only when [mqtt] is configured
    from paho.mqtt.enums import CallbackAPIVersion

    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=not persistent)
    if will_topic:
        client.will_set(will_topic, "offline", qos=1, retain=True)
    if settings.username:
        client.username_pw_set(settings.username, settings.password)
    if settings.tls:
        client.tls_set(ca_certs=settings.ca_file)
    client.reconnect_delay_set(*RECONNECT_DELAY)
    return client


def outbox_path(journal: Path) -> Path:
    """The outbox lives beside the journal (the service may write only there)."""
    return journal.with_name("outbox.db")


def as_json(payload: Any) -> dict[str, Any]:
    """A listener's payload as JSON: a view is already; a cue may come as a `Cue`."""
    to_json = getattr(payload, "to_json", None)
    return dict(to_json()) if callable(to_json) else dict(payload)


class MqttBridge:
    """Publishes one table: state (retained), cues, results (QoS 1, from the outbox), status."""

    def __init__(self, settings: MqttSettings, table: Table, outbox: Path) -> None:
        self.settings = settings
        self.table = table
        self.outbox = Outbox(outbox)
        self.topic = settings.topic
        self._queue: queue.Queue[tuple[str, Any] | None] = queue.Queue(QUEUE_SIZE)
        self._state: dict[str, Any] = table.view()  # the latest view, published retained
        self._game: str | None = None  # the game whose results `_told` holds
        self._told: dict[str, dict[str, Any]] = {}  # its results as stored in the outbox
        self._unstored: dict[str, dict[str, Any]] = {}  # results the outbox could not take yet, by id
        self._inflight: dict[int, tuple[str, int]] = {}  # paho message id -> (result id, version)
        self._sending: set[tuple[str, int]] = set()
        self._dropped = 0
        self._state_due = True  # the latest view is not on the broker yet
        self._results_due = True  # the outbox may hold results the broker has not acknowledged
        self._closing = False
        self.client = make_client(settings, f"companion-{settings.table}", will_topic=f"{self.topic}/status")
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = lambda client, userdata, mid, reason, properties: self._put(("acked", mid))
        self._thread = threading.Thread(target=self._run, name="mqtt", daemon=True)

    # The table's side: called under its lock, never waits for the broker

    def __call__(self, kind: str, payload: Any) -> None:
        if kind == "state":
            self._state, self._state_due = payload, True
            self._store_results(payload)
            self._put(("wake", None), table=True)
        elif kind == "cue":
            self._put(("cue", as_json(payload)), table=True)

    def _store_results(self, view: dict[str, Any]) -> None:
        """Put new or changed results in the outbox, and retract those an undo took back."""
        start = self.table.game_start
        current = results_of(self.settings.table, start, view)
        game = game_id(start) if start else None
        if game != self._game:  # another game (a start, a restart, an undo past a start)
            stored = self.outbox.of_game(game) if game else {}
            self._game, self._told = game, {rid: r for rid, r in stored.items() if not r.get("retracted")}
        changed = [result for rid, result in current.items() if self._told.get(rid) != result]
        taken_back = [retraction(result) for rid, result in self._told.items() if rid not in current]
        self._told = current
        self._store({**self._unstored, **{result["id"]: result for result in changed + taken_back}})

    def _store(self, due: dict[str, dict[str, Any]]) -> None:
        """Put `due` (by id) in the outbox; on a failing disk keep it for the next input, of this
        game or the next (the input itself stands: it is in the journal)."""
        if not due:
            return
        try:
            self.outbox.put(list(due.values()))
        except sqlite3.Error as error:
            self._unstored = due
            log.error(
                "mqtt: the outbox could not store %d results (%s): tried again at the next input",
                len(due),
                error,
            )
            return
        self._unstored = {}
        self._results_due = True

    def _put(self, item: tuple[str, Any], table: bool = False) -> None:
        try:
            self._queue.put_nowait(item) if table else self._queue.put(item)
        except queue.Full:
            self._dropped += 1
            if self._dropped in (1, 100, 10000):
                log.warning("mqtt: the broker is behind: %d messages dropped (results kept)", self._dropped)

    # Start and stop

    def start(self) -> None:
        """Store what the journal shows (a result a crash kept from the outbox), then connect.
        Called before the readers and the web start, so no input comes in meanwhile."""
        self._store_results(self.table.view())
        self._thread.start()
        self.client.connect_async(self.settings.host, self.settings.port, keepalive=15)
        self.client.loop_start()

    def close(self, timeout: float = 2.0) -> None:
        """Say "offline" (a clean stop; a crash leaves it to the last will) and disconnect."""
        self._closing = True
        self._queue.put(None)
        self._thread.join(timeout)
        if self.client.is_connected():
            info = self.client.publish(f"{self.topic}/status", "offline", qos=1, retain=True)
            with contextlib.suppress(RuntimeError, ValueError):  # not sent in time: the will says it
                info.wait_for_publish(timeout)
        self.client.disconnect()
        self.client.loop_stop()
        self.outbox.close()

    @property
    def connected(self) -> bool:
        return bool(self.client.is_connected())

    # The broker's side: one thread publishes everything, in order

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            log.warning("mqtt: %s refused the connection: %s", self.settings.host, reason)
            return
        log.info("mqtt: connected to %s:%s as %s", self.settings.host, self.settings.port, self.topic)
        self._put(("connected", None))

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if not self._closing:
            log.warning("mqtt: lost the broker (%s); retrying", reason)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._handle(*item)
            except Exception:  # one bad message must not stop the publishing
                log.exception("mqtt: could not publish %s", item[0])

    def _handle(self, kind: str, payload: Any) -> None:
        if kind == "acked":
            sent = self._inflight.pop(payload, None)
            if sent:
                self._sending.discard(sent)
                self.outbox.sent(*sent)
            return
        if not self.client.is_connected():
            return  # "connected" publishes the latest state and every pending result
        if kind == "connected":
            self._inflight.clear()
            self._sending.clear()
            self._publish("status", "online", qos=1, retain=True)
            if self.settings.discovery:
                for topic, config in discovery_messages(self.settings):
                    self.client.publish(topic, json.dumps(config), qos=1, retain=True)
            self._state_due = self._results_due = True
        if kind == "cue":
            self._publish("cue", payload)
        # Flags, not queued messages: a full queue can drop a wake-up, never the latest state or a result.
        if self._state_due:
            self._state_due = False
            self._publish("state", self._state, retain=True)
        if self._results_due:
            self._results_due = False
            self._flush()

    def _flush(self) -> None:
        """Publish every result the broker has not acknowledged (and that is not on its way)."""
        for pending in self.outbox.pending():
            key = (pending.id, pending.version)
            if key not in self._sending:
                info = self._publish("result", pending.payload, qos=1)
                self._inflight[info.mid] = key
                self._sending.add(key)

    def _publish(self, leaf: str, payload: Any, qos: int = 0, retain: bool = False) -> Any:
        text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        return self.client.publish(f"{self.topic}/{leaf}", text, qos=qos, retain=retain)
