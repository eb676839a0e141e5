"""Run the server under uvicorn (``promptcache serve``); the engine comes from :func:`local_backend.loader.build_engine`."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from local_backend.server.graceful import run_asgi
from local_backend.server.state import DEFAULT_MAX_TOKENS


def serve(
    engine: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    served_model_names: Sequence[str] = (),
    default_max_tokens: int = DEFAULT_MAX_TOKENS,
    log_level: str = "info",
    sock: socket.socket | None = None,
) -> None:
    """Serve ``engine`` on ``host:port`` until Ctrl-C / SIGTERM, then shut down gracefully and return.

    Requests in flight get up to 5 s to finish. The signal is not raised again after the shutdown (as uvicorn
    does), so ``promptcache serve`` exits 0.

    Args:
        engine: a ``LocalEngine`` (see :func:`local_backend.loader.build_engine`).
        sock: a socket already bound to ``host:port`` (see :func:`local_backend.server.listen.bind_listener`);
            uvicorn listens on it instead of binding its own, so a taken port was refused before the model loaded.
        served_model_names: restrict the model names accepted (default: any).
        default_max_tokens: output tokens of OpenAI requests that give none.
        log_level: uvicorn's log level. Given ``sock``, uvicorn does not log the address it listens on (it
            did not bind it); ``promptcache serve`` prints the ``base_url`` lines itself once the model is loaded.
    """
    from local_backend.server.app import create_app

    app = create_app(engine, served_model_names=served_model_names, default_max_tokens=default_max_tokens)
    run_asgi(app, host=host, port=port, log_level=log_level, sock=sock)
