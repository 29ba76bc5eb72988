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
    browser reconnects and starts again from the current state."""

    def __init__(self, queue_size: int = 256) -> None:
        self._queues: set[queue.Queue[tuple[str, dict[str, Any]] | None]] = set()
        self._lock = threading.Lock()
        self._queue_size = queue_size

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        with self._lock:
            for q in list(self._queues):
                try:
                    q.put_nowait((kind, payload))
                except queue.Full:
                    self._queues.discard(q)
                    q.queue.clear()
                    q.put_nowait(None)  # tells the stream to end

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._queues)

    def stream(self, first: dict[str, Any], keepalive: float = KEEPALIVE_SECONDS) -> Iterator[str]:
        """The text of one client's event stream: the current state, then every message."""
        q: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue(self._queue_size)
        with self._lock:
            self._queues.add(q)
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
                self._queues.discard(q)

    def close(self) -> None:
        """End every stream (at shutdown)."""
        with self._lock:
            for q in self._queues:
                q.queue.clear()
                q.put_nowait(None)
            self._queues.clear()


def format_event(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"
