"""``promptcache diff``: where and why a request stops sharing its prefix with an earlier one.

Two entry points, both ending in the one miss-cause classifier
(:mod:`promptcache.misses.guard`):

- :func:`diff_files`: two request bodies (``A.json`` earlier, ``B.json`` new),
  each a bare body or a trace record (``{"t", "api", "session", "body"}``).
- :func:`diff_trace`: request ``at`` (0-based, as in ``simulate``'s output) of
  a trace against the earlier request sharing the longest prefix. The trace is
  simulated up to that request under its own provider's rules, so a runtime
  cause (``ttl_expired``, ``below_minimum``, ``evicted``) is named too.

:func:`char_diff` splits the text around the divergence into equal / deleted /
inserted runs for a coloured character diff.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, APIS, OPENAI_CHAT, OPENAI_RESPONSES, check_api, infer_api
from promptcache.misses.causes import Divergence
from promptcache.misses.guard import compare_bodies
from promptcache.providers.profiles import ModelProfile, UnknownModelWarning, model_profile
from promptcache.simulate.anthropic import has_breakpoint
from promptcache.simulate.base import below_minimum_detail
from promptcache.simulate.driver import simulate_records
from promptcache.trace.shape import MalformedBody, check_body
from promptcache.trace.records import BOM, EmptyTraceError, SkippedLines, read_trace
from promptcache.trace.shape import validate_body


@dataclasses.dataclass(frozen=True)
class DiffReport:
    """The first divergence of a request from an earlier one, with labels for display.

    Attributes:
        divergence: the classifier's report (cause, layer, path, token offset, snippets, hint).
        new_label / earlier_label: how to name the two requests (``B.json``, ``request 3 (sup-002, t=27.9 s)``).
        miss_cause: the cause ``simulate`` reports for the request (None for a hit);
            for two bare bodies, the divergence's cause unless it is benign.
    """

    divergence: Divergence
    new_label: str
    earlier_label: str | None
    miss_cause: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the divergence fields plus the labels and the char diff runs."""
        return {"new": self.new_label, "earlier": self.earlier_label, "miss_cause": self.miss_cause,
                **self.divergence.to_dict(),
                "char_diff": [list(run) for run in char_diff(self.divergence)]}


def char_diff(divergence: Divergence) -> list[tuple[str, str]]:
    """The snippets around the divergence as ``(op, text)`` runs, ``op`` in ``equal|delete|insert``.

    ``delete`` runs are text of the earlier request, ``insert`` runs text of the new one.
    """
    old, new = divergence.earlier_snippet, divergence.snippet
    if not old and not new:
        return []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    runs: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            runs.append(("equal", new[j1:j2]))
            continue
        if i2 > i1:
            runs.append(("delete", old[i1:i2]))
        if j2 > j1:
            runs.append(("insert", new[j1:j2]))
    return runs


def body_problem(api: str, body: Mapping[str, Any]) -> str | None:
    """Why ``body`` is not an ``api`` request body that ``diff`` can compare faithfully, or None.

    The structural check the simulators run (:func:`~promptcache.trace.requests.check_body`, model not
    required), then the trace validator's (:func:`promptcache.trace.shape.validate_body`) checks of what
    the rendering would otherwise drop or misread: top-level keys the API does not have (an Anthropic
    ``system`` under ``openai.chat``) and tool definitions of the other API's shape. Key order and turn
    order are not refused: explaining them is ``diff``'s job.
    """
    try:
        check_body(api, body, model_given=True)
    except MalformedBody as exc:
        return str(exc)
    for issue in validate_body(api, body):
        if (issue.path == "body" and issue.message.startswith("unknown key")) or issue.path.startswith("body.tools"):
            return f"{issue.path}: {issue.message}"
    return None


def load_request(path: str | os.PathLike[str], api: str | None = None) -> tuple[str, Mapping[str, Any]]:
    """Read one request from a JSON file: a bare body or a trace record.

    Returns:
        ``(api, body)``; the API is ``api``, the record's, or inferred from the body's shape.

    Raises:
        ValueError: naming ``path``: not UTF-8 (the byte and its offset), not JSON, not an object, an API
            that cannot be inferred (pass ``--api``), a body that is not a request body of its API
            (:func:`body_problem`; when it fits another API, the message says to pass that one), or an
            ``openai.responses`` body with ``previous_response_id`` (its chained prefix is not in the file:
            the message says to diff the trace instead).
        OSError: the file cannot be read.
    """
    data = Path(path).read_bytes().removeprefix(BOM)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}): request "
                         "bodies are UTF-8 JSON; re-save it as UTF-8") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); give one request "
                         "body per file") from None
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: expected a JSON object (a request body or a trace record), not "
                         f"{type(value).__name__}")
    if isinstance(value.get("body"), Mapping) and "messages" not in value:  # a trace record
        recorded = value.get("api")
        if api is None and recorded not in APIS:
            raise ValueError(f"{path}: a trace record needs an 'api' of {', '.join(APIS)}, not {recorded!r}")
        api, value = api or str(recorded), value["body"]
    if api is None:
        try:
            api = infer_api(value)
        except ValueError:
            empty = "" if value.get("messages") else " (it has no messages)"
            raise ValueError(f"{path}: cannot tell whether this body is {ANTHROPIC_MESSAGES} or {OPENAI_CHAT}"
                             f"{empty}; pass --api {ANTHROPIC_MESSAGES} or --api {OPENAI_CHAT}") from None
        given = False
    else:
        api, given = check_api(api), True
    problem = body_problem(api, value)
    if problem is not None:
        fits = [other for other in APIS if other != api and given and body_problem(other, value) is None]
        hint = f"; these look like {fits[0]} bodies; pass --api {fits[0]}" if fits else ""
        raise ValueError(f"{path}: not a request body of {api}: {problem}{hint}")
    if api == OPENAI_RESPONSES and value.get("previous_response_id") is not None:
        raise ValueError(f"{path}: previous_response_id {value['previous_response_id']!r}: the chained prefix (the "
                         "earlier response's input and output) is not in this file, so the request cannot be compared "
                         "as sent; diff the trace that holds both (promptcache diff TRACE.jsonl --at N) or send the "
                         "whole input")
    return api, value


def _profile(body: Mapping[str, Any]) -> ModelProfile | None:
    """The Anthropic profile of the body's model (None when it has none or is not an Anthropic model)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnknownModelWarning)
            return model_profile("anthropic", str(body.get("model") or ""))
    except ValueError:
        return None


def diff_files(earlier: str | os.PathLike[str], new: str | os.PathLike[str], *, api: str | None = None) -> DiffReport:
    """Compare request body ``new`` with ``earlier`` (``promptcache diff A.json B.json``).

    Without a clock there is no simulation, but one runtime fact is static: an
    Anthropic request without any ``cache_control`` reads nothing (``no_breakpoint``),
    or, when its prompt is below the model's minimum cacheable prompt, could not be
    cached anyway (``below_minimum``, expected: nothing to fix).

    Raises:
        ValueError: what :func:`load_request` raises, or a body that cannot be rendered.
    """
    old_request, new_request = load_request(earlier, api), load_request(new, api)
    divergence = compare_bodies(new_request, [old_request])
    if divergence.expected and new_request[0] == ANTHROPIC_MESSAGES and not has_breakpoint(new_request[1]):
        profile = _profile(new_request[1])
        if profile is not None and divergence.prompt_tokens < profile.min_cacheable_tokens:
            divergence = divergence.with_cause("below_minimum", below_minimum_detail(divergence.prompt_tokens, profile),
                                               expected=True)
        else:
            divergence = divergence.with_cause("no_breakpoint", "no cache_control anywhere in the new request (no "
                                                                "marker, no top-level automatic caching): it reads nothing")
    cause = None if divergence.expected and divergence.cause in ("new_turn", "repeat") else divergence.cause
    return DiffReport(divergence, str(new), str(earlier), cause)


def diff_trace(path: str | os.PathLike[str], at: int, *, strict: bool = False, **options: Any) -> DiffReport:
    """Compare request ``at`` (0-based) of a trace with the earlier request sharing the longest prefix.

    Args:
        options: as :func:`promptcache.simulate.simulate_records` (``provider``, ``model``, ...).

    ``at`` counts the requests as ``simulate`` does: malformed lines and bodies are
    reported (a ``TraceFormatWarning`` naming the line) and not counted.

    Raises:
        IndexError: ``at`` is not a request of the trace (the message gives the range).
        EmptyTraceError: the trace holds no usable request (empty, or every line skipped).
        ValueError / TraceFormatError: unreadable trace (``strict``), bad options.
    """
    if at < 0:
        raise IndexError(f"--at {at}: request indexes count from 0")
    skip = SkippedLines()
    records = read_trace(path, strict=strict, on_problem=skip)
    try:
        simulation = simulate_records(records, strict=strict, on_problem=skip,
                                      source=os.path.basename(os.fspath(path)), limit=at + 1, **options)
    except EmptyTraceError as exc:
        raise EmptyTraceError(os.fspath(path), exc.skipped) from None
    requests = simulation.requests
    if at >= len(requests):
        count = len(requests)
        raise IndexError(f"--at {at}: the trace has {count} requests (indexes 0 to {count - 1}; malformed lines "
                         f"are not counted)")
    request = requests[at]
    if request.divergence is None:
        raise ValueError(f"request {at} could not be compared: {request.error}")

    def label(index: int) -> str:
        return f"request {index} ({requests[index].session}, t={requests[index].t:g} s)"

    earlier = request.divergence.earlier_index
    return DiffReport(request.divergence, label(at), label(earlier) if earlier is not None else None,
                      request.miss_cause)
