"""Run an ASGI app under uvicorn and shut it down gracefully on Ctrl-C / SIGTERM (``serve`` and ``proxy``).

Imports neither torch nor the engine: ``promptcache proxy`` runs on it without the model stack.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def run_asgi(app: Any, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
             sock: socket.socket | None = None) -> None:
    """Run the ASGI ``app`` under uvicorn until Ctrl-C / SIGTERM, then shut down gracefully (5 s) and return.

    Args:
        sock: a socket already bound to ``host:port`` (:func:`local_backend.server.listen.bind_listener`);
            uvicorn listens on it instead of binding its own.
        log_level: uvicorn's log level.
    """
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """uvicorn's server, but a shutdown on Ctrl-C / SIGTERM returns instead of re-raising the signal.

        uvicorn (>= 0.29) raises the captured signal again once it has shut down, so the process ends as if
        killed (``KeyboardInterrupt``: click's ``Aborted!``, exit 1; SIGTERM: exit 143). A graceful shutdown
        is this command's success: the command returns and the process exits 0.
        """

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                captured = getattr(self, "_captured_signals", None)  # uvicorn's private list (0.29-0.54)
                if isinstance(captured, list):
                    captured.clear()  # handled: the shutdown was graceful, nothing to re-raise

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
    GracefulServer(config).run(sockets=[sock] if sock is not None else None)
