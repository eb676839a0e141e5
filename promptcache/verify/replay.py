"""What every ``verify`` backend shares: the figures of one replayed request, the chat body it sends, and the errors
that are not the server's refusal (so the verdict does not call them ``refused``).

Kept apart from :mod:`promptcache.verify.backends` and :mod:`promptcache.verify.http_backend` so both import it
and neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promptcache.convert import anthropic_to_openai, responses_to_chat
from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_RESPONSES


@dataclass(frozen=True)
class Replay:
    """What a backend reported for one request.

    Attributes:
        prompt_tokens: prompt length the backend reports (tokens).
        cached_tokens: prefix-cache hit the backend reports (tokens).
        ttft_s: seconds from sending to the first token (None if unknown).
        output_token_ids: generated ids when the backend exposes them (local), else None.
    """

    prompt_tokens: int
    cached_tokens: int
    ttft_s: float | None
    output_token_ids: list[int] | None = None


class BodyError(ValueError):
    """A trace body that cannot be turned into the chat the backend runs (a trace or app problem, not the
    server's): the message names the path."""


class OracleError(ValueError):
    """The oracle's token ids for a request cannot be had or trusted: the tokenisation route is missing, refused
    or answered no ids, or the server ran another prompt length. The message says what to do."""


def openai_body(api: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` as an OpenAI chat body (Anthropic bodies converted, cache markers dropped; Responses bodies
    through their Chat view).

    Raises:
        BodyError: the converter refuses the body (the message names the path).
    """
    try:
        if api == ANTHROPIC_MESSAGES:
            return anthropic_to_openai(body).body
        if api == OPENAI_RESPONSES:
            return responses_to_chat(body).body
    except ValueError as exc:
        raise BodyError(str(exc)) from exc
    return dict(body)
