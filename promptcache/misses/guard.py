"""The one miss-cause classifier: why a request stops sharing a prefix with earlier ones.

Architecture doc, "Miss causes": the runtime guard, ``promptcache diff``,
``verify`` and ``simulate`` all reuse this module. For a request it finds the
earlier request (any session) sharing the longest token prefix, and reports
the first divergence: layer, block path, token offset, common-prefix tokens, a
short character diff, and the cause class.

Candidates: requests with a different model or OpenAI ``prompt_cache_key``
never share a provider cache entry, so a request is compared with earlier
requests of its own (model, cache key) group; only when that group is empty
(the first request of a tenant or model) is it compared with any earlier
request, and the result is then ``other_cache_key`` (expected), ``first_request``
or ``params_changed`` (model; see Sessions).

Sessions (a trace record's ``session``, ``compare(..., session=)``): an app
may run several prompts (a router beside an answerer, two templates on one
model) in separate conversations; none of that is a cache bug. Rules, where
the session of both requests is known (an unknown session counts as the same):

- The first request of a model whose best earlier request is in another
  session: ``first_request`` ("first request for model M"). In the same
  session it is a model switch, ``params_changed`` (layer ``params``, path
  ``model``), unless the two are different prompts (they part before the
  conversation and fewer than the model's minimum cacheable tokens follow
  identically): a router call beside the answerer's is ``first_request`` too.
- A divergence in the tools, system, documents or examples layer (in any
  session, as the model rule: the wrappers' one default session carries every
  template an app sends), with fewer identical tokens after it
  (``static_after_divergence``, summed over every re-synchronised run) than
  the model's minimum cacheable prefix and than half the tokens after the
  divergence (most of the rest differs), and a cause other than
  ``whitespace_only`` / ``volatile_value`` / ``json_key_order`` / a reordered
  tool set, is another prompt: ``first_request`` ("a different prompt: shares
  N tokens with request K"). A change followed by a long identical part (a
  per-user name at the top of a shared prompt) stays unexpected
  (``system_changed`` ...).
- ``history_rewritten`` against the session's latest earlier request of the
  same (model, cache key) group sharing a message with this one, of n >= 8
  messages, is a chunked truncation, expected, when this request's messages
  start with that request's last n - k (k >= n / 2 oldest ones dropped at
  once, at least one kept; ``Conversation(budget_tokens=...)``): detail
  "truncated from the oldest end (k of n messages dropped at once)"; with one
  new head message before them it is the SDK's compaction
  (``Conversation(compactor=...)``): "compacted: k of n messages summarised
  into one head message". The earlier request must itself have only appended
  (no truncation two requests in a row). A sliding window (a few messages
  every turn, "keep the last 3 messages") stays unexpected.

Offsets: ``token_offset`` is the first token of the new request the earlier
request's cache entry cannot serve; ``common_prefix_tokens`` equals it (0 for
another model or cache key, the conversation start for a changed
``tool_choice``); ``static_after_divergence`` is
:func:`promptcache.misses.causes.identical_after`.

Causes (:class:`MissCause`), checked in provider render order:

1. ``params_changed``: model differs; or ``tool_choice`` / ``thinking`` /
   ``effort`` differ while the text prefix reaches the messages (Anthropic
   invalidates the messages level on these; provider-cache-rules.md).
2. OpenAI ``response_format`` differs: ``json_key_order`` when equal in
   canonical form, else ``tools_changed`` (the schema is prefix content).
3. Divergence in ``tools``: ``json_key_order`` when the tool lists are equal
   in canonical form (same tools, same order, only key order differs),
   otherwise ``tools_changed`` (detail: reordered / schema changed / added /
   removed; "reordered" says when the set is canonically equal, as in a
   shuffled set- or map-backed tool registry).
4. Divergence in the ``turn`` (or the new request only appends): the benign
   ``new_turn`` — unless a long identical part follows the differing span
   (``static_after_divergence`` >= the model's minimum cacheable tokens), then
   it is reported as unexpected with the hint "put variable content last".
5. A history divergence from another conversation's request is re-checked
   against this conversation's own latest earlier request (its messages are
   a prefix of this one's); when that one parts earlier (tools, system,
   documents, examples, model), its cause is reported instead.
6. Elsewhere, on the diverging block against the same block of the earlier
   request: ``whitespace_only`` (equal after collapsing whitespace),
   ``volatile_value`` (the divergence falls inside a timestamp / id-like value
   in both, :mod:`promptcache.prompt.volatile`), ``json_key_order`` (equal as
   canonical JSON), else by layer: ``system_changed``, ``document_changed``,
   ``examples_changed``, ``history_rewritten`` (detail: slid / edited / removed).

``below_minimum``, ``ttl_expired``, ``evicted`` and ``no_breakpoint`` come from
runtime facts the callers (simulator, engine) know; they attach them with
:meth:`Divergence.with_cause`. Benign classes: ``first_request``, ``new_turn``,
``repeat`` (a prefix of / identical to an earlier request), ``other_cache_key``,
``below_minimum`` (the prompt is shorter than the model's minimum: nothing to
fix), and the chunked truncation above.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from promptcache.providers.apis import infer_api
from promptcache.misses.classifier import Classifier
from promptcache.misses.rendering import Rendering, decompose
from promptcache.misses.causes import EXPECTED_CAUSES, RUNTIME_CAUSES, Divergence, MissCause
from promptcache.misses.prefix_index import PrefixIndex

__all__ = ["EXPECTED_CAUSES", "RUNTIME_CAUSES", "Classifier", "Divergence", "MissCause", "PrefixGuard",
           "classify_requests", "compare_bodies"]

_POOL = 32  # recent requests searched for a slid history window
_MIN_CHUNK_HISTORY = 8
"""Messages the earlier request must hold for a truncation of half of them to count as a chunk."""


def _group(rendering: Rendering) -> tuple[Any, Any]:
    return rendering.model, rendering.cache_key


def _cut(earlier: Sequence[int], keys: Sequence[int]) -> tuple[int, bool] | None:
    """``(k, compacted)``: ``keys`` (message hashes) start with ``earlier[k:]`` (k >= 1, at least one message
    kept), after one new head message when ``compacted``; None when neither holds."""
    n = len(earlier)
    head_is_new = bool(keys) and keys[0] not in earlier
    for k in range(1, n):
        if earlier[k:] == tuple(keys[:n - k]):
            return k, False
        if head_is_new and earlier[k:] == tuple(keys[1:1 + n - k]):
            return k, True
    return None


class PrefixGuard:
    """Runtime guard: remembers recent requests and classifies each new one against them.

    Example::

        guard = PrefixGuard("anthropic.messages")
        for body in requests:
            divergence = guard.check(body)
            if divergence is not None:           # only unexpected divergences
                log.warning(divergence.summary())
    """

    def __init__(self, api: str | None = None, *, max_requests: int = 256,
                 static_tail_threshold: int | None = None, as_of: Any = None) -> None:
        """
        Args:
            api: the API of the bodies checked (``anthropic.messages``, ``openai.chat`` or
                ``openai.responses``, read through its Chat view with Responses paths); None: given per
                call or inferred from each body's shape.
            max_requests: how many earlier requests are kept to compare against (oldest
                dropped). Each is kept in compact form (:meth:`Rendering.compact`:
                token ids as ``array('I')``, the rendered text recomputed when
                needed), about 5 bytes per prompt token: ~0.15 MB for a 30k-token
                request, so the default 256 keep ~40 MB at most at that size.
            static_tail_threshold, as_of: see :class:`Classifier`.
        """
        self.api = api
        self.classifier = Classifier(static_tail_threshold=static_tail_threshold, as_of=as_of)
        self.index = PrefixIndex(max_entries=max_requests)
        self.renderings: dict[int, Rendering] = {}
        self.sessions: dict[int, str | None] = {}
        self.numbers: dict[int, int] = {}
        self._key_of: dict[int, int] = {}  # the caller's number -> key, for compare(continues=)
        self.count = 0
        self.last: Divergence | None = None
        self._unrecorded: tuple[Mapping[str, Any], Any, Rendering] | None = None

    def compare(self, body: Mapping[str, Any], api: str | None = None, *, layers: Mapping[str, Any] | None = None,
                record: bool = True, session: str | None = None, number: int | None = None,
                continues: int | None = None) -> Divergence:
        """Classify ``body`` against the remembered requests (every divergence, benign ones included).

        Args:
            body: the request body.
            api: its API; defaults to the guard's, else inferred (:func:`promptcache.providers.apis.infer_api`).
            layers: layer hints for :func:`promptcache.misses.rendering.decompose`.
            record: remember this request for later comparisons.
            session: the request's session (trace ``session``, the client's ``session=``); None when
                not known, which is read as "maybe the same session" (no session rule excuses it).
            number: the caller's number for this request, reported as ``earlier_index`` when a
                later request is compared with it (default: the count of requests remembered before).
            continues: the number of the request this one continues (a Responses request whose
                ``previous_response_id`` names that request's reply): compared with it, never as "a
                different prompt"; ignored when that request is no longer kept.

        Raises:
            ValueError: an api that cannot be inferred, or what
                :func:`promptcache.misses.rendering.decompose` raises for a bad body.
        """
        rendering = decompose(body, api or self.api or infer_api(body), layers=layers)
        stored = rendering.compact()
        parent = self._key_of.get(continues) if continues is not None else None
        if parent is not None:  # a Responses chain: the request it continues
            divergence = self.classifier.classify(rendering, self.renderings[parent].expand(), continues,
                                                  continues=True)
            return self._done(body, layers, stored, session, number, record, divergence)
        group = _group(rendering)
        best = self.index.best(stored.tokens, lambda i: _group(self.renderings[i]) == group)
        if best is None:
            best = self.index.best(stored.tokens)
        old = self.renderings[best].expand() if best is not None else None
        pool = [self.renderings[k] for k in sorted(self.renderings, reverse=True)[:_POOL]
                if _group(self.renderings[k]) == group]
        divergence = self.classifier.classify(rendering, old, self.numbers.get(best), pool,
                                              other_session=self._other_session(session, best))
        if divergence.cause == MissCause.FIRST_REQUEST and divergence.detail.startswith("a different prompt"):
            divergence = self._same_prompt_changed(rendering, divergence, session, group)
        if divergence.layer == "history" and not divergence.expected:
            divergence = self._against_predecessor(rendering, divergence, session)
        if divergence.cause == MissCause.HISTORY_REWRITTEN and not divergence.expected:
            divergence = self._chunked_truncation(rendering, divergence, session)
        return self._done(body, layers, stored, session, number, record, divergence)

    def _done(self, body: Mapping[str, Any], layers: Any, stored: Rendering, session: str | None,
              number: int | None, record: bool, divergence: Divergence) -> Divergence:
        if record:
            self._add(stored, session, number)
        else:  # kept for remember(body): the wrappers compare first and remember the same body once it is sent
            self._unrecorded = (body, layers, stored)
        self.last = divergence
        return divergence

    def remember(self, body: Mapping[str, Any], api: str | None = None, *,
                 layers: Mapping[str, Any] | None = None, session: str | None = None,
                 number: int | None = None) -> None:
        """Remember ``body`` for later comparisons without classifying it.

        For callers that compare first (``compare(..., record=False)``) and
        remember a request only once it really went out: the client wrappers
        remember a body after the provider accepted it, so a refused or failed
        request never becomes the reference a retry is compared with.
        ``session`` and ``number``: as :meth:`compare`.

        Raises:
            ValueError: as :meth:`compare`.
        """
        pending, self._unrecorded = self._unrecorded, None
        if pending is not None and pending[0] is body and pending[1] == layers:
            stored = pending[2]  # compared just before: rendered (and tokenised) once
        else:
            stored = decompose(body, api or self.api or infer_api(body), layers=layers).compact()
        self._add(stored, session, number)

    def _add(self, stored: Rendering, session: str | None, number: int | None) -> None:
        key = self.count
        self.renderings[key], self.sessions[key] = stored, session
        self.numbers[key] = key if number is None else number
        self._key_of[self.numbers[key]] = key
        for dropped in self.index.add(key, stored.tokens):
            if self._key_of.get(self.numbers.get(dropped)) == dropped:  # type: ignore[arg-type]
                del self._key_of[self.numbers[dropped]]
            for table in (self.renderings, self.sessions, self.numbers):
                table.pop(dropped, None)
        self.count += 1

    def _other_session(self, session: str | None, key: int | None) -> bool:
        """Request ``key`` is known to be of another session than ``session``."""
        earlier = self.sessions.get(key) if key is not None else None
        return session is not None and earlier is not None and earlier != session

    def _same_prompt_changed(self, rendering: Rendering, divergence: Divergence, session: str | None,
                             group: Any) -> Divergence:
        """Keep "a different prompt" only if no recent request of the group is this prompt changed near its top.

        The longest shared prefix is often a tie of a few template tokens (the
        role header) between every earlier request; the latest of the tied ones
        may be another template while an older one is the same prompt with one
        value changed at its top. Each of the last ``_POOL`` requests of the
        group is tried; the first whose classification is unexpected (a long
        identical part follows the change) is the verdict.
        """
        for key in sorted(self.renderings, reverse=True)[:_POOL]:
            earlier = self.renderings[key]
            if self.numbers[key] == divergence.earlier_index or _group(earlier) != group:
                continue
            candidate = self.classifier.classify(rendering, earlier.expand(), self.numbers[key],
                                                 other_session=self._other_session(session, key))
            if not candidate.expected:
                return candidate
        return divergence

    def _against_predecessor(self, rendering: Rendering, divergence: Divergence, session: str | None) -> Divergence:
        """Re-classify against the same conversation's latest earlier request, when there is one.

        The longest-prefix request may belong to another conversation (it shares
        the system prompt, then differs in history). If an earlier request's
        conversation messages are a prefix of this one's (the same conversation,
        one or more turns back) and it parts from this request in an earlier
        layer, that earlier divergence is the real cause: e.g. this turn's
        system prompt differs in whitespace from the one the conversation was
        started with.
        """
        keys = rendering.message_keys
        for key in sorted(self.renderings, reverse=True):
            earlier = self.renderings[key]
            size = len(earlier.message_keys)
            if self.numbers[key] == divergence.earlier_index or not 0 < size <= len(keys) \
                    or earlier.message_keys != keys[:size]:
                continue
            candidate = self.classifier.classify(rendering, earlier.expand(), self.numbers[key],
                                                 other_session=self._other_session(session, key))
            if candidate.layer in ("tools", "system", "documents", "examples") or candidate.path == "model":
                return candidate
            return divergence
        return divergence

    def _session_predecessor(self, rendering: Rendering, session: str | None, before: int | None = None) -> int | None:
        """The latest request (before key ``before``) of ``session`` and of ``rendering``'s (model, cache key)
        group whose messages overlap ``rendering``'s (share at least one message); None when there is none."""
        keys, group = set(rendering.message_keys), _group(rendering)
        for key in sorted(self.renderings, reverse=True):
            if before is not None and key >= before:
                continue
            earlier = self.renderings[key]
            if self.sessions[key] == session and _group(earlier) == group and keys & set(earlier.message_keys):
                return key
        return None

    def _chunked_truncation(self, rendering: Rendering, divergence: Divergence, session: str | None) -> Divergence:
        """``history_rewritten`` made expected when it is a chunked truncation or compaction from the oldest end.

        Compared with the session's latest earlier request of the same (model,
        cache key) group whose messages overlap this one's (a router's call
        beside the answerer's is skipped), of ``n`` messages: this request's
        messages start with that request's last ``n - k`` messages (the oldest
        ``k`` dropped, then the reply and new turns appended), or with one new
        head message and then those (``Conversation(compactor=...)``: the
        dropped part summarised into a fixed head message), where a real block
        of history went at once: ``k >= n / 2``, ``n >= 8`` (:data:`_MIN_CHUNK_HISTORY`)
        and that earlier request itself only appended to its own predecessor (no
        truncation two requests in a row). ``Conversation(budget_tokens=...)``
        does this; a sliding window (a few messages every turn, or "keep the
        last 3 messages") stays unexpected.
        """
        best = self._session_predecessor(rendering, session)
        if best is None:
            return divergence
        keys, earlier = rendering.message_keys, self.renderings[best].message_keys
        n = len(earlier)
        cut = _cut(earlier, keys)
        if cut is None or n < _MIN_CHUNK_HISTORY or 2 * cut[0] < n:
            return divergence
        previous = self._session_predecessor(self.renderings[best], session, before=best)
        if previous is not None and _cut(self.renderings[previous].message_keys, earlier) is not None:
            return divergence  # the earlier request was a truncation too: a window sliding every turn
        dropped, compacted = cut
        detail = (f"compacted: {dropped} of {n} messages summarised into one head message" if compacted else
                  f"truncated from the oldest end ({dropped} of {n} messages dropped at once)")
        return dataclasses.replace(divergence, expected=True, hint="", earlier_index=self.numbers[best], detail=detail)

    def check(self, body: Mapping[str, Any], api: str | None = None, *,
              layers: Mapping[str, Any] | None = None, session: str | None = None) -> Divergence | None:
        """Record ``body`` and return its divergence when it is unexpected, else None."""
        divergence = self.compare(body, api, layers=layers, session=session)
        return None if divergence.expected else divergence


class ReplyNumbers:
    """The request numbers of a trace's Responses replies, to find the request a chained one continues."""

    def __init__(self) -> None:
        self._numbers: dict[str, int] = {}

    def parent(self, record: Any, number: int) -> int | None:
        """The number of the request ``record`` continues (None: not chained, or its reply is unknown); then
        ``record``'s own reply is numbered ``number``."""
        parent = self._numbers.get(getattr(record, "continues", None) or "")
        response = getattr(record, "response", None)
        if isinstance(response, Mapping) and isinstance(response.get("id"), str):
            self._numbers[response["id"]] = number
        return parent


def classify_requests(requests: Iterable[Any], *, static_tail_threshold: int | None = None,
                      on_error: Callable[[int, ValueError], None] | None = None) -> list[Divergence]:
    """Classify every request of a trace against the requests before it.

    Args:
        requests: :class:`~promptcache.trace.records.TraceRecord` objects (their ``session`` is used, see
            "Sessions" in the module docstring) or ``(api, body)`` pairs (sessions not known), in time order.
        on_error: called with ``(index, error)`` for a request whose body cannot be classified (an
            image without a source, a tool without a name: what :func:`promptcache.misses.rendering.decompose`
            raises); that request then gets ``None`` and is not compared against. Without it the
            error is raised.

    Returns:
        One :class:`Divergence` (or ``None``, see ``on_error``) per request;
        ``earlier_index`` counts from 0 in the given order. A 20-request trace of
        7k-token bodies takes well under a second (each body is tokenised once;
        see ``bench/guard_speed.py``).

    Raises:
        ValueError: a body that cannot be classified, when ``on_error`` is None.
    """
    guard = PrefixGuard(max_requests=1 << 30, static_tail_threshold=static_tail_threshold)
    out: list[Any] = []
    replies = ReplyNumbers()
    for index, request in enumerate(requests):
        api, body = (request.api, request.body) if hasattr(request, "body") else request
        try:
            divergence = guard.compare(body, api, session=getattr(request, "session", None), number=index,
                                       continues=replies.parent(request, index))
        except ValueError as exc:
            if on_error is None:
                raise
            on_error(index, exc)
            out.append(None)
            continue
        out.append(divergence)
    return out


def compare_bodies(new: tuple[str, Mapping[str, Any]], earlier: Sequence[tuple[str, Mapping[str, Any]]],
                   *, static_tail_threshold: int | None = None) -> Divergence:
    """Classify one ``(api, body)`` against earlier ``(api, body)`` pairs (``promptcache diff A.json B.json``)."""
    guard = PrefixGuard(max_requests=max(1, len(earlier)), static_tail_threshold=static_tail_threshold)
    for api, body in earlier:
        guard.compare(body, api)
    return guard.compare(new[1], new[0], record=False)
