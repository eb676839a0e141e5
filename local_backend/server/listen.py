"""The listening socket of ``promptcache serve``, bound before the model loads so a taken port fails at once.

Nothing here imports torch or uvicorn: the check costs a ``bind`` call, not
the seconds a model takes to load. The socket listens at once: on Linux two
``SO_REUSEADDR`` sockets may both *bind* one address while neither listens, so
a bind alone would let a second ``serve`` through while the first loads its
model. It is then handed to uvicorn (``uvicorn.Server.run(sockets=[sock])``),
whose ``listen`` call on it again is harmless. Connections that arrive while
the model loads wait in the backlog.
"""

from __future__ import annotations

import errno
import socket


class ListenError(OSError):
    """``host:port`` cannot be bound; the message names the address, the reason and the option to change."""


_REASONS = {
    errno.EADDRINUSE: ("address already in use", "pick another --port"),
    errno.EACCES: ("permission denied (ports below 1024 need privileges)", "pick another --port"),
    errno.EADDRNOTAVAIL: ("this machine has no such address", "pick another --host"),
}


BACKLOG = 2048
"""Pending connections the socket queues (uvicorn's default ``backlog``)."""


def bind_listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (backlog :data:`BACKLOG`), the way uvicorn opens one.

    IPv6 when ``host`` holds a colon, else IPv4; ``SO_REUSEADDR`` is set, so a
    port left in TIME_WAIT by a previous server can be reused, while a port
    another socket listens on (another ``serve`` still loading its model
    included) is refused. Port 0 picks a free port: read it back with
    ``sock.getsockname()[1]``. The caller closes the socket if it does not
    go on to serve.

    Raises:
        ListenError: the address cannot be bound or listened on; the message is one line, e.g.
            ``cannot listen on 127.0.0.1:8000: address already in use; pick another --port``
            (an IPv6 address is bracketed: ``[::1]:8000``).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    address = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)  # a bound socket that does not listen would not stop a second SO_REUSEADDR bind
    except socket.gaierror as exc:
        sock.close()
        raise ListenError(f"cannot listen on {address}: unknown host ({exc.strerror}); pick another --host"
                          ) from exc
    except OSError as exc:
        sock.close()
        reason, fix = _REASONS.get(exc.errno, (exc.strerror or str(exc), "pick another --host or --port"))
        raise ListenError(f"cannot listen on {address}: {reason}; {fix}") from exc
    sock.set_inheritable(True)
    return sock
