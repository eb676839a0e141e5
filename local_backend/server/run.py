"""Build an engine and run the server under uvicorn (``promptcache serve``)."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from local_backend.model_folder import check_tokenizer_folder
from local_backend.models import load_errors_as
from local_backend.server.state import DEFAULT_MAX_TOKENS


def load_tokenizer(spec: str | None) -> Any:
    """The tokenizer named by ``--tokenizer``: None (the model's own), ``"chatml"`` (the embedded model's
    cl100k + ChatML tokenizer), or a local directory with a transformers tokenizer.

    Raises:
        ModelNotFoundError: ``spec`` is a path that does not exist.
        ModelLoadError: ``spec`` holds none of the tokenizer files, or transformers cannot load a tokenizer from it
            (any failure of ``from_pretrained``; see :func:`local_backend.models.load_errors_as`).
    """
    if spec is None:
        return None
    if spec == "chatml":
        from local_backend.tokenizer import ChatMLTokenizer

        return ChatMLTokenizer()
    from transformers import AutoTokenizer

    folder = check_tokenizer_folder(spec)
    with load_errors_as(f"cannot load a tokenizer from {spec} (give a folder saved with save_pretrained, or "
                        "'chatml')"):
        return AutoTokenizer.from_pretrained(folder)


def build_engine(model: str | None = None, tokenizer: str | None = None, **engine_options: Any):
    """A :class:`~local_backend.engine.LocalEngine` for ``model`` (None = embedded) and ``tokenizer``.

    The loader of ``promptcache serve``, ``verify`` and ``demo``. ``engine_options`` are
    :class:`~local_backend.config.EngineConfig` fields; None values are dropped.

    Raises:
        ModelLoadError: ``model`` or ``tokenizer`` cannot be loaded (a missing path, a folder that is not a
            transformers model, a model folder without a tokenizer while none is given, ...); the message
            says what to pass instead.
        ValueError: a bad engine option.
    """
    from local_backend.engine import LocalEngine

    options = {k: v for k, v in engine_options.items() if v is not None}
    return LocalEngine(model, tokenizer=load_tokenizer(tokenizer), **options)


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
        engine: a ``LocalEngine`` (see :func:`build_engine`).
        sock: a socket already bound to ``host:port`` (see :func:`local_backend.server.listen.bind_listener`);
            uvicorn listens on it instead of binding its own, so a taken port was refused before the model loaded.
        served_model_names: restrict the model names accepted (default: any).
        default_max_tokens: output tokens of OpenAI requests that give none.
        log_level: uvicorn's log level. Given ``sock``, uvicorn does not log the address it listens on (it
            did not bind it); ``promptcache serve`` prints the ``base_url`` lines itself once the model is loaded.
    """
    import uvicorn

    from local_backend.server.app import create_app

    class GracefulServer(uvicorn.Server):
        """uvicorn's server, but a shutdown on Ctrl-C / SIGTERM returns instead of re-raising the signal.

        uvicorn (>= 0.29) raises the captured signal again once it has shut down, so the process ends as if
        killed (``KeyboardInterrupt``: click's ``Aborted!``, exit 1; SIGTERM: exit 143). A graceful shutdown
        is this command's success: ``serve`` returns and the process exits 0.
        """

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                captured = getattr(self, "_captured_signals", None)  # uvicorn's private list (0.29-0.54)
                if isinstance(captured, list):
                    captured.clear()  # handled: the shutdown was graceful, nothing to re-raise

    app = create_app(engine, served_model_names=served_model_names, default_max_tokens=default_max_tokens)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
    GracefulServer(config).run(sockets=[sock] if sock is not None else None)
