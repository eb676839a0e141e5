"""Reading request bodies: JSON parsing, typed field access and sampling parameters, with 400s that say what to fix.

Bodies are read as plain JSON (not pydantic models) so every problem gets the
caller's provider-shaped error and message, not FastAPI's 422.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from local_backend.errors import InvalidSamplingParamsError
from local_backend.sampling_params import SamplingParams
from local_backend.server.errors import bad_request


async def read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object.

    The body must be UTF-8 (RFC 8259, section 8.1: JSON exchanged between systems is UTF-8); a leading
    byte order mark is skipped.

    Raises:
        APIError: 400 for an empty body, a body that is not valid UTF-8 (naming the first bad byte and its
            offset), invalid JSON or a non-object body.
    """
    raw = await request.body()
    if not raw.strip():
        raise bad_request("the request body is empty; send a JSON object")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise bad_request(f"the request body is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}: "
                          f"{exc.reason}); send the JSON encoded as UTF-8") from exc
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad_request(f"We could not parse the JSON body of your request ({exc}). "
                          "Send valid JSON with Content-Type: application/json.") from exc
    if not isinstance(body, dict):
        raise bad_request(f"the request body must be a JSON object, not {type(body).__name__}")
    return body


def number(body: Mapping[str, Any], key: str, default: float | None = None) -> float | None:
    """``body[key]`` as a number (None/absent -> ``default``). Raises APIError 400 otherwise."""
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise bad_request(f"{key}: expected a number, got {value!r}", param=key)
    return float(value)


def integer(body: Mapping[str, Any], key: str, default: int | None = None, *, minimum: int | None = None
            ) -> int | None:
    """``body[key]`` as an integer >= ``minimum`` (None/absent -> ``default``). Raises APIError 400 otherwise."""
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise bad_request(f"{key}: expected an integer, got {value!r}", param=key)
    if minimum is not None and value < minimum:
        raise bad_request(f"{key}: must be >= {minimum}, got {value}", param=key)
    return int(value)


def string_list(body: Mapping[str, Any], key: str) -> list[str]:
    """``body[key]`` as a list of strings (a single string allowed). Raises APIError 400 otherwise."""
    value = body.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise bad_request(f"{key}: expected a string or a list of strings", param=key)


def flag(body: Mapping[str, Any], key: str) -> bool:
    """``body[key]`` as a boolean (absent -> False). Raises APIError 400 otherwise."""
    value = body.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise bad_request(f"{key}: expected true or false, got {value!r}", param=key)
    return value


def sampling_params(body: Mapping[str, Any], max_tokens: int, *, top_k_key: str | None = None) -> SamplingParams:
    """``SamplingParams`` from the common fields (``temperature`` default 1.0, ``top_p``, ``seed``, top-k)
    and vLLM's ``ignore_eos`` extension (generate exactly ``max_tokens``: benchmarks, tests).

    Raises:
        APIError: 400 naming the parameter that is out of range.
    """
    try:
        return SamplingParams(
            max_tokens=max_tokens,
            temperature=number(body, "temperature", 1.0),
            top_p=number(body, "top_p", 1.0),
            top_k=integer(body, top_k_key, 0) if top_k_key else 0,
            seed=integer(body, "seed"),
            ignore_eos=flag(body, "ignore_eos"),
        )
    except InvalidSamplingParamsError as exc:
        raise bad_request(str(exc), param=str(exc).split(" ", 1)[0]) from exc
