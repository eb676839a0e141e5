"""``promptcache verify``: replay a trace on a real prefix cache (``report.py``) through a backend: the
in-process engine or an OpenAI-compatible server (``backends.py``)."""

from __future__ import annotations

from promptcache.verify.backends import BackendError, HTTPBackend, LocalBackend, Replay, make_backend
from promptcache.verify.report import RequestResult, VerifyReport, verify_trace

__all__ = ["BackendError", "HTTPBackend", "LocalBackend", "Replay", "RequestResult", "VerifyReport",
           "make_backend", "verify_trace"]
