"""The examples' ``--live`` mode: the provider's real client, with every API failure told in one line.

Without a key the official SDKs fail late and loudly: ``anthropic.Anthropic()``
is built happily and the first request dies in a ``TypeError`` ("Could not
resolve authentication method"), ``openai.OpenAI()`` raises ``OpenAIError`` at
construction, and a wrong key comes back as an ``AuthenticationError``
traceback. Here :func:`live_client` checks the environment variable the SDK
reads before a client exists (so nothing is sent and no trace is started), and
:func:`run` turns a refused key or an unreachable API into one line on stderr;
both exit with status 2, the usual status of a usage error (fix the setup and
run again). Every other error of the API (any ``anthropic.APIError`` /
``openai.APIError``: HTTP 429, 500, 529, a 400 such as "credit balance too
low", a response that cannot be read) is one line naming the status and the
API's own message, with advice where there is one, and exit status 1: the run
failed, the setup may be fine.
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
USAGE_ERROR = 2
"""Exit status of a missing or refused key, an unreachable API, or a trace path that cannot be written."""
RUN_ERROR = 1
"""Exit status of any other API error: the request failed at run time."""

ADVICE = {429: "rate limited / overloaded: retry later", 529: "rate limited / overloaded: retry later"}
"""HTTP status -> advice after the message; 429 is both APIs' rate limit, 529 Anthropic's "overloaded_error"
(docs.anthropic.com/en/api/errors). Other 5xx statuses get :data:`SERVER_ADVICE`."""
SERVER_ADVICE = "the provider's server failed: retry later"


def _fail(message: str, status: int = USAGE_ERROR) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(status)


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


def _api_failure(exc: anthropic.APIError | openai.APIError) -> str:
    """One line for an API error that is not about the key or the connection: the status, the API's message, advice."""
    name = _NAMES["anthropic" if isinstance(exc, anthropic.APIError) else "openai"]
    if isinstance(exc, anthropic.APIResponseValidationError | openai.APIResponseValidationError):
        return f"the {name} API answered HTTP {exc.status_code} with a response that cannot be read: {exc.message}"
    if isinstance(exc, anthropic.APIStatusError | openai.APIStatusError):
        advice = ADVICE.get(exc.status_code, SERVER_ADVICE if exc.status_code >= 500 else "")
        return f"the {name} API answered HTTP {exc.status_code}: {_provider_message(exc)}" + \
            (f"; {advice}" if advice else "")
    return f"the {name} API request failed: {exc.message}"


def run(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """``main(argv)``'s exit status; one line on stderr and a :class:`SystemExit` for any error of the API.

    Exit status 2 (:data:`USAGE_ERROR`): ``AuthenticationError`` (401) and ``PermissionDeniedError`` (403)
    of either SDK, naming the variable the key came from; ``APIConnectionError`` (timeouts included),
    naming the URL and its variable. Exit status 1 (:data:`RUN_ERROR`): every other ``anthropic.APIError``
    / ``openai.APIError`` (``RateLimitError``, ``InternalServerError``, ``BadRequestError``,
    ``APIResponseValidationError``, ...), naming the HTTP status and the API's message, with
    :data:`ADVICE` where there is some. Anything else propagates unchanged.
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
    except (anthropic.APIError, openai.APIError) as exc:
        _fail(_api_failure(exc), RUN_ERROR)
