"""Anthropic Messages bodies <-> OpenAI Chat Completions bodies, both directions.

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

from promptcache.providers.apis import ANTHROPIC_MESSAGES, check_api, sdk_ordered
from promptcache.convert._result import SEPARATOR, ConversionResult
from promptcache.convert.to_anthropic import openai_to_anthropic
from promptcache.convert.to_openai import anthropic_to_openai

__all__ = ["SEPARATOR", "ConversionResult", "anthropic_to_openai", "convert_body", "openai_to_anthropic"]


def convert_body(body: Mapping[str, Any], source_api: str, target_api: str, **options: Any) -> ConversionResult:
    """Convert ``body`` from ``source_api`` to ``target_api`` (identity, keys SDK-ordered, when they are equal).

    ``options`` go to :func:`anthropic_to_openai` / :func:`openai_to_anthropic`.

    Raises:
        ValueError: unknown api, or what the converters raise.
    """
    check_api(source_api)
    check_api(target_api)
    if source_api == target_api:
        return ConversionResult(sdk_ordered(target_api, dict(body)), {}, (), ())
    if source_api == ANTHROPIC_MESSAGES:
        return anthropic_to_openai(body, **options)
    return openai_to_anthropic(body, **options)
