"""The local backend's HTTP server: OpenAI- (Chat Completions, Completions, Responses) and Anthropic-compatible
endpoints over :class:`LocalEngine`.

``create_app(engine, served_model_names=...)`` builds the FastAPI app;
``serve(engine, host=..., port=...)`` runs it under uvicorn (what
``promptcache serve`` calls). See ``docs/verify.md``. The names load lazily,
so :mod:`local_backend.chat_template` (shared with ``promptcache verify``)
imports without FastAPI.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "serve"]

_LAZY = {"create_app": "local_backend.server.app", "serve": "local_backend.server.run"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'local_backend.server' has no attribute {name!r}")
