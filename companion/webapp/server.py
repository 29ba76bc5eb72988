"""The HTTP server: waitress, sized and guarded so that no client can lock the others out.

- Threads: one per open event stream (up to the broker's capacity) plus `API_THREADS` that only
  pages and API calls can use, so streams never starve the API.
- Connections: at most `PER_ADDRESS_CONNECTIONS` open at once from one address (more are closed as
  soon as they are accepted); a connection with no request running is closed after
  `IDLE_SECONDS` without traffic. Idle sockets hold no thread in waitress, only a slot.
- A client that vanished (no FIN: a tablet asleep) is cut by the kernel once data sent to it stays
  unacknowledged for `UNACKED_SECONDS` (TCP_USER_TIMEOUT; the streams' keep-alives make that data).
- `channel_request_lookahead` lets waitress see a client close its connection while its event
  stream is waiting, so the stream ends and its thread is freed at once.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from typing import Any

from waitress.server import TcpWSGIServer, create_server

log = logging.getLogger(__name__)

API_THREADS = 8
PER_ADDRESS_CONNECTIONS = 16
IDLE_SECONDS = 10
UNACKED_SECONDS = 30
OUTBUF_BYTES = 256 * 1024  # a stream thread waits (and its client's queue fills) past this much unsent


class GuardedServer(TcpWSGIServer):  # type: ignore[misc]
    """waitress's TCP server with a per-address connection limit and a cut for vanished peers."""

    per_address = PER_ADDRESS_CONNECTIONS

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
        except OSError:
            return
        if accepted is None:
            return
        conn, addr = accepted
        address = addr[0] if isinstance(addr, tuple) else str(addr)
        open_here = sum(1 for channel in self.active_channels.values() if _address(channel) == address)
        if open_here >= self.per_address:
            log.warning("refused a connection from %s: %d already open", address, open_here)
            conn.close()
            return
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, UNACKED_SECONDS * 1000)
        except OSError:
            conn.close()
            return
        self.channel_class(self, conn, self.fix_addr(addr), self.adj, map=self._map)


def _address(channel: Any) -> str | None:
    addr = getattr(channel, "addr", None)
    return addr[0] if isinstance(addr, tuple) else None


def build_server(app: Any, host: str, port: int, streams: int) -> Any:
    """A waitress server for `app` on host:port with room for `streams` event streams."""
    server = create_server(
        app,
        host=host,
        port=port,
        threads=streams + API_THREADS,
        ident=None,
        channel_timeout=IDLE_SECONDS,
        cleanup_interval=2,
        channel_request_lookahead=1,
        outbuf_high_watermark=OUTBUF_BYTES,
        connection_limit=max(100, streams * 3),
    )
    # create_server builds waitress's TcpWSGIServer; ours only adds behaviour, no state.
    sockets = getattr(server, "map", None) or server._map  # several listeners, or one
    for dispatcher in list(sockets.values()):
        if type(dispatcher) is TcpWSGIServer:
            dispatcher.__class__ = GuardedServer
    return server


def connection_hooks(environ: dict[str, Any]) -> tuple[Callable[[], bool], Callable[[], None]]:
    """For an event stream: whether its client has gone, and how to close its connection from
    another thread (the broker drops a client that stopped reading). Outside waitress (the test
    client), never gone and nothing to close."""
    disconnected = environ.get("waitress.client_disconnected")
    channel = getattr(disconnected, "__self__", None)
    if disconnected is None or channel is None:
        return (lambda: False), (lambda: None)

    def close() -> None:
        channel.will_close = True  # the server's loop closes it; a waiting write then gives up
        channel.server.pull_trigger()

    return disconnected, close
