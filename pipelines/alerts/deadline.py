"""One send's time limit: connect, send and every read together within `timeout_seconds`.

A socket timeout bounds each read, not the exchange: a receiver that trickles a byte a second never
trips it and holds a send for as long as it likes. So the exchange runs in a worker thread and the
caller waits for it at most the deadline; past it, the caller shuts the exchange's socket (which ends
a read that is waiting or trickling, so the worker does not linger) and gives up on it. The worker
notes how far it got: whether the request went out whole (`sent`: the receiver may have taken it, the
outcome is unknown) and, once the receiver has answered, the answer (kept even if the exchange is
still being wound up, e.g. a slow SMTP QUIT, when the deadline passes).
"""

from __future__ import annotations

import socket
import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Expired(Exception):
    """The deadline passed before the receiver answered; `sent`: after the request went out whole."""

    def __init__(self, seconds: float, sent: bool) -> None:
        super().__init__(f"no answer within {seconds:g} s")
        self.seconds, self.sent = seconds, sent


class Exchange(Generic[T]):
    """What the worker tells the caller: the socket to shut at the deadline, and its progress."""

    def __init__(self) -> None:
        self.sent = False
        self.answered = False
        self.answer: T | None = None
        self._socket_of: Callable[[], socket.socket | None] = lambda: None

    def watch(self, socket_of: Callable[[], socket.socket | None]) -> None:
        """How to find the exchange's socket (a connection makes it only when it connects)."""
        self._socket_of = socket_of

    def answered_with(self, value: T) -> T:
        self.answer, self.answered = value, True
        return value

    def abort(self) -> None:
        sock = self._socket_of()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # not connected yet, or already closed
                pass


def run_within(seconds: float, work: Callable[[Exchange[T]], T], exchange: Exchange[T]) -> T:
    """`work(exchange)`'s result, or its exception, if it ends within `seconds`; raises Expired when it
    does not (unless it had its answer by then: that answer is returned). The caller makes the
    exchange, to read after a failure whether the request had gone out whole (`exchange.sent`)."""
    outcome: dict[str, object] = {}
    done = threading.Event()

    def worker() -> None:
        try:
            outcome["value"] = work(exchange)
        except BaseException as err:  # handed to the caller, which decides
            outcome["error"] = err
        finally:
            done.set()

    threading.Thread(target=worker, name="gpuledger-alert-send", daemon=True).start()
    if not done.wait(seconds):
        exchange.abort()
        if exchange.answered:
            return exchange.answer  # type: ignore[return-value]
        raise Expired(seconds, exchange.sent)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
