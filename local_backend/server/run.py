"""Build an engine and run the server under uvicorn (``promptcache serve``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from local_backend.server.state import DEFAULT_MAX_TOKENS


def load_tokenizer(spec: str | None) -> Any:
    """The tokenizer named by ``--tokenizer``: None (the model's own), ``"chatml"`` (the embedded model's
    cl100k + ChatML tokenizer), or a local directory with a transformers tokenizer.

    Raises:
        FileNotFoundError: ``spec`` is a path that does not exist.
    """
    if spec is None:
        return None
    if spec == "chatml":
        from local_backend.tokenizer import ChatMLTokenizer

        return ChatMLTokenizer()
    from transformers import AutoTokenizer

    if not Path(spec).expanduser().exists():
        raise FileNotFoundError(f"tokenizer directory {spec} does not exist (give a local folder or 'chatml')")
    return AutoTokenizer.from_pretrained(Path(spec).expanduser())


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt")
"""Files of a transformers tokenizer; a model folder with none of them needs ``--tokenizer``."""


def build_engine(model: str | None = None, tokenizer: str | None = None, **engine_options: Any):
    """A :class:`~local_backend.engine.LocalEngine` for ``model`` (None = embedded) and ``tokenizer``.

    ``engine_options`` are :class:`~local_backend.config.EngineConfig` fields; None values are dropped.

    Raises:
        FileNotFoundError / ValueError: from the engine (bad path, bad option); a ValueError that says to pass
            ``--tokenizer chatml`` or a tokenizer folder when ``model`` is a folder without a tokenizer.
    """
    from local_backend.engine import LocalEngine

    options = {k: v for k, v in engine_options.items() if v is not None}
    try:
        return LocalEngine(model, tokenizer=load_tokenizer(tokenizer), **options)
    except (ValueError, OSError) as exc:
        folder = Path(model).expanduser() if isinstance(model, str) else None
        if tokenizer is None and folder is not None and folder.is_dir() \
                and not any((folder / name).exists() for name in TOKENIZER_FILES):
            raise ValueError(f"{model} holds no tokenizer (none of {', '.join(TOKENIZER_FILES)}). Pass "
                             "--tokenizer chatml if the model uses the embedded model's vocabulary (cl100k + "
                             "ChatML), or --tokenizer PATH to a tokenizer folder.") from exc
        raise


def serve(
    engine: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    served_model_names: Sequence[str] = (),
    default_max_tokens: int = DEFAULT_MAX_TOKENS,
    log_level: str = "info",
) -> None:
    """Serve ``engine`` on ``host:port`` until interrupted (Ctrl-C / SIGTERM).

    Args:
        engine: a ``LocalEngine`` (see :func:`build_engine`).
        served_model_names: restrict the model names accepted (default: any).
        default_max_tokens: output tokens of OpenAI requests that give none.
        log_level: uvicorn's log level (it logs the address once the socket is bound).
    """
    import uvicorn

    from local_backend.server.app import create_app

    app = create_app(engine, served_model_names=served_model_names, default_max_tokens=default_max_tokens)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
    uvicorn.Server(config).run()
