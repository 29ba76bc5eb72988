"""Server-Sent Events: every table change and cue, fanned out to the connected scoreboards."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

KEEPALIVE_SECONDS = 15.0


class Broker:
    """A table listener that copies each message into one bounded queue per connected client.

    A client too slow to keep up is dropped (its queue is full) rather than slowing the table; its
    browser reconnects and starts again from the current state. Each open stream holds one server
    thread, so at most `max_clients` are open: a new one ends the oldest, which is most likely a
    tablet that went to sleep without closing its connection. The API's threads are never starved."""

    def __init__(self, queue_size: int = 256, max_clients: int = 16) -> None:
        # A dict keeps the order the streams opened in, oldest first.
        self._queues: dict[queue.Queue[tuple[str, dict[str, Any]] | None], None] = {}
        self._lock = threading.Lock()
        self._queue_size = queue_size
        self.max_clients = max_clients

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        with self._lock:
            for q in list(self._queues):
                try:
                    q.put_nowait((kind, payload))
                except queue.Full:
                    self._end(q)

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._queues)

    def stream(self, first: dict[str, Any], keepalive: float = KEEPALIVE_SECONDS) -> Iterator[str]:
        """The text of one client's event stream: the current state, then every message."""
        q: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue(self._queue_size)
        with self._lock:
            while len(self._queues) >= self.max_clients:
                self._end(next(iter(self._queues)))
            self._queues[q] = None
        try:
            yield "retry: 2000\n\n"
            yield format_event("state", first)
            while True:
                try:
                    message = q.get(timeout=keepalive)
                except queue.Empty:
                    yield ": keepalive\n\n"  # also how a closed connection is noticed
                    continue
                if message is None:
                    return
                yield format_event(*message)
        finally:
            with self._lock:
                self._queues.pop(q, None)

    def close(self) -> None:
        """End every stream (at shutdown)."""
        with self._lock:
            for q in list(self._queues):
                self._end(q)

    def _end(self, q: queue.Queue[tuple[str, dict[str, Any]] | None]) -> None:
        """Stop one stream: drop what it has not sent and tell its generator to return."""
        self._queues.pop(q, None)
        q.queue.clear()
        q.put_nowait(None)


def format_event(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"
