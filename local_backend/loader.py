"""An engine from the choices a command line offers: a model folder (or the embedded model) and a tokenizer.

The loader of ``promptcache serve``, ``verify --backend local`` and ``demo``;
neither the server nor the CLI is needed to use it.
"""

from __future__ import annotations

from typing import Any

from local_backend.model_folder import check_tokenizer_folder
from local_backend.models import load_errors_as


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
