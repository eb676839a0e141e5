"""The examples' ``--live`` mode: the provider's real client, with a missing or refused key told in one line.

Without a key the official SDKs fail late and loudly: ``anthropic.Anthropic()``
is built happily and the first request dies in a ``TypeError`` ("Could not
resolve authentication method"), ``openai.OpenAI()`` raises ``OpenAIError`` at
construction, and a wrong key comes back as an ``AuthenticationError``
traceback. Here :func:`live_client` checks the environment variable the SDK
reads before a client exists (so nothing is sent and no trace is started), and
:func:`run` turns a refused key or an unreachable API into one line on stderr.
Both exit with status 2, the usual status of a usage error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn

import anthropic
import openai

KEYS = {"anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), "openai": ("OPENAI_API_KEY",)}
"""provider -> the environment variables its SDK takes credentials from (``anthropic._client``, ``openai``'s
client auth); the first is the one to set. An empty value counts as unset, as in the SDKs."""

_NAMES = {"anthropic": "Anthropic", "openai": "OpenAI"}
_BASE_URLS = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
_EXIT = 2


def _fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(_EXIT)


def live_client(provider: str) -> anthropic.Anthropic | openai.OpenAI:
    """The real client of ``provider`` (``"anthropic"`` or ``"openai"``) for ``--live``.

    Raises:
        SystemExit: status 2, after one line on stderr naming the variable to set, when none of
            :data:`KEYS` ``[provider]`` is set; no client is built and nothing is sent.
    """
    if not any(os.environ.get(name) for name in KEYS[provider]):
        variable = KEYS[provider][0]
        _fail(f"--live sends to the real {_NAMES[provider]} API and needs a key: set {variable} "
              f"(export {variable}=...), or drop --live to run offline")
    return anthropic.Anthropic() if provider == "anthropic" else openai.OpenAI()


def _provider_message(exc: anthropic.APIStatusError | openai.APIStatusError) -> str:
    """The API's own error message (Anthropic nests it under ``error``; the OpenAI SDK keeps only that part)."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    return str(error.get("message") or exc.message) if isinstance(error, dict) else exc.message


def run(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """``main(argv)``'s exit status; 2 with one line on stderr when the live API refuses the key or cannot be reached.

    Handles ``AuthenticationError`` (401) and ``PermissionDeniedError`` (403) of either SDK by naming the
    variable the key came from, and ``APIConnectionError`` by naming the URL and its variable. Anything else
    propagates unchanged.
    """
    try:
        return main(argv)
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError,
            openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        provider = "anthropic" if isinstance(exc, anthropic.APIError) else "openai"
        variable = next((name for name in KEYS[provider] if os.environ.get(name)), KEYS[provider][0])
        _fail(f"the {_NAMES[provider]} API refused the key in {variable} ({exc.status_code}: {_provider_message(exc)}); "
              f"check {variable}, or drop --live to run offline")
    except (anthropic.APIConnectionError, openai.APIConnectionError) as exc:
        provider = "anthropic" if isinstance(exc, anthropic.APIError) else "openai"
        _fail(f"could not reach the {_NAMES[provider]} API at {exc.request.url} ({exc.message}); check the network "
              f"and {_BASE_URLS[provider]}, or drop --live to run offline")
