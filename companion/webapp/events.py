"""Server-Sent Events: every table change and cue, fanned out to the connected scoreboards.

The policy (issue 12/13, docs/architecture.md "Event streams"):
- a client subscribes *before* the view it starts from is read, so no input can fall between them;
- each message is serialized once, whatever the number of clients;
- a client that is still reading is never ended to make room for another: a new stream beyond the
  capacity, or beyond the per-address share, is refused (told to retry later) instead;
- a client that stopped reading (its queue is full) is ended, and the server closes its connection.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from companion.core.cues import Cue

KEEPALIVE_SECONDS = 15.0
POLL_SECONDS = 1.0  # how often a waiting stream checks that its client is still connected
RETRY_MS = 2000  # the browser's reconnection delay after a stream ends
BUSY_RETRY_MS = 5000  # ... and after a refusal

Message = tuple[str, "dict[str, Any] | None", str]  # kind, payload (identity only), the event's text


@dataclass(eq=False)
class Subscription:
    """One connected client: its queue, its address, and how to close its connection."""

    address: str
    queue: queue.Queue[Message | None]
    disconnected: Callable[[], bool] = field(default=lambda: False)
    close_connection: Callable[[], None] = field(default=lambda: None)


class StreamRefused(Exception):
    """No room for another stream (the server's capacity, or this address's share)."""


class Broker:
    """A table listener that queues each message, serialized once, for every connected client."""

    def __init__(self, capacity: int = 32, per_address: int = 4, queue_size: int = 256) -> None:
        self._clients: list[Subscription] = []
        self._lock = threading.Lock()
        self._queue_size = queue_size
        self.capacity = capacity
        self.per_address = per_address

    def __call__(self, kind: str, payload: dict[str, Any] | Cue) -> None:
        if isinstance(payload, Cue):
            payload = payload.to_json()  # what the scoreboards receive
        message: Message = (kind, payload, format_event(kind, payload))
        stalled = []
        with self._lock:
            for client in self._clients:
                try:
                    client.queue.put_nowait(message)
                except queue.Full:
                    stalled.append(client)
            for client in stalled:
                self._end(client)
        for client in stalled:  # outside the lock: it may wait for the server's loop
            client.close_connection()

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._clients)

    def subscribe(
        self,
        address: str,
        disconnected: Callable[[], bool] | None = None,
        close_connection: Callable[[], None] | None = None,
    ) -> Subscription:
        """Register a client now (its messages queue from this moment); raise StreamRefused if full."""
        client = Subscription(address, queue.Queue(self._queue_size))
        if disconnected is not None:
            client.disconnected = disconnected
        if close_connection is not None:
            client.close_connection = close_connection
        with self._lock:
            self._clients = [c for c in self._clients if not c.disconnected()]
            if len(self._clients) >= self.capacity:
                raise StreamRefused(f"All {self.capacity} scoreboard streams are in use.")
            if sum(c.address == address for c in self._clients) >= self.per_address:
                raise StreamRefused(f"This address already has {self.per_address} streams open.")
            self._clients.append(client)
        return client

    def stream(
        self, client: Subscription, first: dict[str, Any], keepalive: float = KEEPALIVE_SECONDS
    ) -> Iterator[str]:
        """The text of one client's event stream: `first` (the view read after subscribing), then
        every message. States queued before `first` was read are older than it and skipped."""
        try:
            yield f"retry: {RETRY_MS}\n\n"
            yield format_event("state", first)
            _skip_older_states(client.queue, first)
            idle = 0.0
            while not client.disconnected():
                try:
                    message = client.queue.get(timeout=min(POLL_SECONDS, keepalive))
                except queue.Empty:
                    idle += min(POLL_SECONDS, keepalive)
                    if idle >= keepalive:
                        idle = 0.0
                        yield ": keepalive\n\n"  # also how a vanished client is noticed (TCP)
                    continue
                if message is None:
                    return
                idle = 0.0
                yield message[2]
        finally:
            self.unsubscribe(client)

    def unsubscribe(self, client: Subscription) -> None:
        with self._lock:
            if client in self._clients:
                self._clients.remove(client)

    def close(self) -> None:
        """End every stream (at shutdown)."""
        with self._lock:
            for client in list(self._clients):
                self._end(client)

    def _end(self, client: Subscription) -> None:
        """Stop one stream: drop what it has not sent and tell its generator to return."""
        self._clients.remove(client)
        with client.queue.mutex:
            client.queue.queue.clear()
        client.queue.put_nowait(None)


def _skip_older_states(pending: queue.Queue[Message | None], first: dict[str, Any]) -> None:
    """Drop the state messages queued up to the one that *is* `first` (the table hands out the same
    view object it announced), so a client never steps back to an older state after its first one.
    If `first` was announced before the client subscribed, everything queued is newer: keep it."""
    with pending.mutex:
        items = list(pending.queue)
        at = next((i for i, m in enumerate(items) if m is not None and m[1] is first), None)
        if at is None:
            return
        kept = [m for i, m in enumerate(items) if i > at or m is None or m[0] != "state"]
        pending.queue.clear()
        pending.queue.extend(kept)


def refusal(reason: str) -> Iterator[str]:
    """A stream that says why it cannot stay and asks the browser to come back later (an
    EventSource gives up for good on an error status, but reconnects after a stream that ends)."""
    yield f"retry: {BUSY_RETRY_MS}\n\n"
    yield format_event("busy", {"error": reason})


def format_event(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"
