"""Request bodies between the three APIs: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses.

Anthropic <-> Chat is direct (below). OpenAI Responses bodies go through Chat:
:func:`responses_to_chat` (``from_responses.py``) is the canonical view the
rest of promptcache reads a Responses body through, with a path map back to
the Responses paths; :func:`chat_to_responses` (``to_responses.py``) is its
inverse; Anthropic <-> Responses chains the two steps. Whole traces:
:func:`promptcache.convert.traces.convert_records` (``promptcache convert``).

Used by ``promptcache verify`` (Anthropic traces replayed on an
OpenAI-compatible server), ``promptcache simulate`` (a trace simulated under
the other provider's rules), the local server and the prefix guard.

Mapping (A = Anthropic, O = OpenAI):

- ``system`` (string or text blocks) <-> the leading ``system`` message. In the
  default ``flat`` shape, system blocks (instructions, then documents) are
  joined with the canonical separator ``"\\n\\n"`` into one string, and a
  message's text blocks likewise; ``keep`` maps lists to lists of text parts.
- ``text`` / ``image`` / ``document`` (base64 PDF) blocks <-> ``text`` /
  ``image_url`` / ``file`` parts; ``tool_use`` blocks <-> assistant
  ``tool_calls`` (``arguments`` = ``json.dumps(input, ensure_ascii=False)``);
  ``tool_result`` blocks (first in a user turn) <-> ``tool`` messages.
- tools ``input_schema`` <-> ``function.parameters``, keeping every key order
  (key order is content). A tool's wrapper order ``{"function", "type"}``
  (as a map-backed serialiser emits it) is carried as a trailing
  ``"type": "custom"`` on the Anthropic tool, the default tool type, so the
  bytes survive a round trip.
- ``tool_choice`` auto/any/tool/none <-> ``"auto"``/``"required"``/function/``"none"``;
  ``disable_parallel_tool_use`` <-> ``parallel_tool_calls``; ``max_tokens`` <->
  ``max_completion_tokens``; ``stop_sequences`` <-> ``stop``; ``temperature``,
  ``top_p``, ``stream``; ``output_config.effort`` <-> ``reasoning_effort``;
  ``output_config.format`` <-> ``response_format`` (``json_schema``).
- ``cache_control`` markers, thinking blocks and parameters without a
  counterpart (``prompt_cache_key``, ``thinking``, ``metadata``, ...) are
  dropped and reported in :attr:`ConversionResult.dropped` with their values.

Round trips: ``keep`` -> ``keep`` is the identity both ways (A -> O -> A
modulo ``cache_control``; O -> A -> O given the dropped O-only parameters back
through ``extra_params``). The defaults (``flat`` to O, ``blocks`` to A) are
the identity too except that a string ``system``/``content`` comes back as
one text block, which every provider renders identically
(provider-cache-rules.md: "A string system or content is one text block").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import (ANTHROPIC_MESSAGES, BEDROCK_CONVERSE, OPENAI_CHAT, OPENAI_RESPONSES, check_api,
                                        sdk_ordered)
from promptcache.convert._result import SEPARATOR, ConversionResult
from promptcache.convert.from_bedrock import converse_to_anthropic
from promptcache.convert.from_responses import responses_to_chat
from promptcache.convert.to_anthropic import openai_to_anthropic
from promptcache.convert.to_openai import anthropic_to_openai
from promptcache.convert.to_responses import chat_to_responses

__all__ = ["SEPARATOR", "ConversionResult", "anthropic_to_openai", "chat_to_responses", "convert_body",
           "openai_to_anthropic", "responses_to_chat"]


def convert_body(body: Mapping[str, Any], source_api: str, target_api: str, **options: Any) -> ConversionResult:
    """Convert ``body`` from ``source_api`` to ``target_api`` (identity, keys SDK-ordered, when they are equal).

    ``options`` go to the converter of the step into ``target_api`` (:func:`anthropic_to_openai`,
    :func:`openai_to_anthropic`, :func:`chat_to_responses`, :func:`responses_to_chat`). Between Anthropic and
    Responses the body goes through Chat; ``dropped`` and ``notes`` of both steps are kept (the second
    step's paths are Chat paths).

    Raises:
        ValueError: unknown api, or what the converters raise.
    """
    check_api(source_api)
    check_api(target_api)
    if target_api == BEDROCK_CONVERSE and source_api != BEDROCK_CONVERSE:
        raise ValueError("conversion to bedrock.converse is not supported; convert from it instead")
    if source_api == BEDROCK_CONVERSE and target_api != BEDROCK_CONVERSE:  # via its Claude Messages equivalent
        first = ConversionResult(converse_to_anthropic(body), {}, (), ())
        if target_api == ANTHROPIC_MESSAGES:
            return first
        return _chained(first, convert_body(first.body, ANTHROPIC_MESSAGES, target_api, **options))
    if source_api == target_api:
        return ConversionResult(sdk_ordered(target_api, dict(body)), {}, (), ())
    if source_api == ANTHROPIC_MESSAGES and target_api == OPENAI_CHAT:
        return anthropic_to_openai(body, **options)
    if source_api == OPENAI_CHAT and target_api == ANTHROPIC_MESSAGES:
        return openai_to_anthropic(body, **options)
    if source_api == OPENAI_RESPONSES:
        first = responses_to_chat(body, **(options if target_api == OPENAI_CHAT else {}))
        if target_api == OPENAI_CHAT:
            return first
        return _chained(first, openai_to_anthropic(first.body, **options))
    first = anthropic_to_openai(body) if source_api == ANTHROPIC_MESSAGES else None
    second = chat_to_responses(first.body if first is not None else body, **options)
    return second if first is None else _chained(first, second)


def _chained(first: ConversionResult, second: ConversionResult) -> ConversionResult:
    """Two conversion steps as one result: the body of the second, what both dropped and noted."""
    return ConversionResult(second.body, {**first.dropped, **second.dropped}, first.notes + second.notes, ())
