"""The listening socket of ``promptcache serve``, bound before the model loads so a taken port fails at once.

Nothing here imports torch or uvicorn: the check costs a ``bind`` call, not
the seconds a model takes to load. The bound socket is handed to uvicorn
(``uvicorn.Server.run(sockets=[sock])``), which starts listening on it.
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


def bind_listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (not yet listening), the way uvicorn binds one.

    IPv6 when ``host`` holds a colon, else IPv4; ``SO_REUSEADDR`` is set, so a
    port left in TIME_WAIT by a previous server can be reused, while a port
    another process listens on is still refused. Port 0 picks a free port:
    read it back with ``sock.getsockname()[1]``.

    Raises:
        ListenError: the address cannot be bound; the message is one line, e.g.
            ``cannot listen on 127.0.0.1:8000: address already in use; pick another --port``.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except socket.gaierror as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: unknown host ({exc.strerror}); pick another --host"
                          ) from exc
    except OSError as exc:
        sock.close()
        reason, fix = _REASONS.get(exc.errno, (exc.strerror or str(exc), "pick another --host or --port"))
        raise ListenError(f"cannot listen on {host}:{port}: {reason}; {fix}") from exc
    sock.set_inheritable(True)
    return sock
