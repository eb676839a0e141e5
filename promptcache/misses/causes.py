"""The vocabulary of cache misses: cause classes and the divergence record.

One list for every tool (architecture doc, "Miss causes"); the classifier that
fills it in is :mod:`promptcache.misses.guard`.
"""

from __future__ import annotations

import bisect
import dataclasses
import enum
from collections.abc import Sequence
from typing import Any

from promptcache.misses.prefix_index import common_prefix


class MissCause(enum.StrEnum):
    """Why a request does not share a prefix with the best earlier request."""

    TOOLS_CHANGED = "tools_changed"
    JSON_KEY_ORDER = "json_key_order"
    SYSTEM_CHANGED = "system_changed"
    DOCUMENT_CHANGED = "document_changed"
    EXAMPLES_CHANGED = "examples_changed"
    HISTORY_REWRITTEN = "history_rewritten"
    WHITESPACE_ONLY = "whitespace_only"
    VOLATILE_VALUE = "volatile_value"
    PARAMS_CHANGED = "params_changed"
    BELOW_MINIMUM = "below_minimum"
    TTL_EXPIRED = "ttl_expired"
    EVICTED = "evicted"
    NO_BREAKPOINT = "no_breakpoint"
    FIRST_REQUEST = "first_request"
    NEW_TURN = "new_turn"
    REPEAT = "repeat"
    OTHER_CACHE_KEY = "other_cache_key"


EXPECTED_CAUSES = frozenset({MissCause.FIRST_REQUEST, MissCause.NEW_TURN, MissCause.REPEAT, MissCause.OTHER_CACHE_KEY})
"""Divergences that are part of normal operation."""
RUNTIME_CAUSES = frozenset({MissCause.BELOW_MINIMUM, MissCause.TTL_EXPIRED, MissCause.EVICTED,
                            MissCause.NO_BREAKPOINT})
"""Causes only callers with runtime facts can tell (attach with :meth:`Divergence.with_cause`):
``no_breakpoint`` is a request that cannot read or write the cache at all (Anthropic without any
``cache_control``, GPT-5.6+ in explicit mode without a breakpoint), whatever its prefix, though
its prompt reaches the model's minimum cacheable tokens. ``below_minimum``: every breakpoint is
below that minimum (unexpected: move the breakpoint), or the whole prompt is (expected: nothing
can be cached, nothing to fix; the callers pass ``expected=True``)."""

HINTS = {
    MissCause.TOOLS_CHANGED: "build the tool list once, sort it by name and serialise schemas with a stable key order",
    MissCause.JSON_KEY_ORDER: "serialise JSON with a fixed key order (json.dumps(..., sort_keys=True))",
    MissCause.SYSTEM_CHANGED: "keep the system prompt byte-identical; move per-request facts into the newest user turn",
    MissCause.DOCUMENT_CHANGED: "keep documents byte-identical between requests, or put the changing one last",
    MissCause.EXAMPLES_CHANGED: "keep few-shot examples fixed and in a fixed order",
    MissCause.HISTORY_REWRITTEN: "only append to the history; truncate rarely and in large chunks, summarise into a "
                                 "fixed head message",
    MissCause.WHITESPACE_ONLY: "build the text in one place with a fixed joiner and strip trailing whitespace "
                               "(normalise it once)",
    MissCause.VOLATILE_VALUE: "drop the value or move it into the newest user turn, at the coarsest granularity that works",
    MissCause.PARAMS_CHANGED: "keep model, tool_choice, thinking and effort fixed within a conversation",
    MissCause.BELOW_MINIMUM: "put the cache breakpoint after at least the model's minimum cacheable tokens of "
                             "stable prefix",
    MissCause.NO_BREAKPOINT: "add cache_control (top-level automatic caching or a marker on the stable prefix)",
    MissCause.NEW_TURN: "put variable content last: the identical part after the divergence could be cached "
                        "if it came before the variable part",
}


RESYNC_ANCHOR = 8
"""Identical tokens (in a row) that re-synchronise two prompts after a differing span."""
_RESYNC_CANDIDATES = 16


def identical_after(new: Sequence[int], old: Sequence[int], start: int) -> int:
    """Tokens identical in both prompts after the divergence at ``start``: the sum of the re-synchronised runs.

    ``new`` and ``old`` (token ids) agree on ``[0, start)`` and part at ``start``.
    A differing span ends where the two re-synchronise: the first position
    ``i`` of ``new`` whose next :data:`RESYNC_ANCHOR` tokens (fewer when a rest
    is shorter) also occur in ``old`` at some ``j`` not before the current
    position of ``old`` (an insertion, deletion or replacement of any length on
    either side). The identical run ``new[i:] == old[j:]`` is counted (of the
    first 16 such ``j`` the longest), and the scan goes on after it for the
    next differing span and run, to the end of either prompt (a greedy
    alignment, in order). 0 when the rests never re-synchronise.

    Examples: a timestamp at the top of a 3,800-token handbook, followed by
    different user messages: ~3,850 tokens (the handbook), not the few ChatML
    tokens the two prompts happen to end with. ``"Customer: {name}. Local
    time: {ts}."`` before the handbook: the short run between the two values
    plus the handbook, not the 14 tokens up to the second value.

    Cost: O(len(old) - start) to index the anchors, then one
    :func:`~promptcache.misses.prefix_index.common_prefix` per candidate.
    """
    a, b = list(new[start:]), list(old[start:])
    size = min(RESYNC_ANCHOR, len(a), len(b))
    if size == 0:
        return 0
    anchors: dict[tuple[int, ...], list[int]] = {}
    for j in range(len(b) - size + 1):
        anchors.setdefault(tuple(b[j:j + size]), []).append(j)
    total, i, floor = 0, 0, 0
    while i <= len(a) - size:
        found = anchors.get(tuple(a[i:i + size]))
        if found:
            later = found[bisect.bisect_left(found, floor):][:_RESYNC_CANDIDATES]
            if later:
                run, j = max((common_prefix(a[i:], b[j:]), j) for j in later)
                total += run
                i, floor = i + run, j + run
                continue
        i += 1
    return total


@dataclasses.dataclass(frozen=True)
class Divergence:
    """The first divergence of a request from the best earlier request.

    Attributes:
        cause: a :class:`MissCause` value.
        expected: True for benign divergences (see :data:`EXPECTED_CAUSES`).
        layer: the layer of the diverging block in the new request.
        path: its block path (``system[0].text``, ``tools[3]``, ``messages[0].content[0].text``, ``model``).
        earlier_path: the block at the same position in the earlier request.
        earlier_index: index (in the list compared against) of the earlier request; None for the first request.
        token_offset: token index in the new request where the cache stops matching.
        common_prefix_tokens: tokens the two renderings share from the start.
        prompt_tokens: tokens of the new request (ChatML rendering, no generation prompt).
        static_after_divergence: identical tokens after the divergence, summed over the runs where the
            two prompts re-synchronise (:func:`identical_after`): how much static content comes after it.
        snippet / earlier_snippet: the text around the divergence in each request;
            ``diff_at`` is the character index in both snippets where they part.
        detail: what exactly changed (e.g. ``"datetime '...14:00:23...' vs '...14:00:00...'"``).
        hint: what to do about it ("" for benign causes).
    """

    cause: str
    expected: bool
    layer: str | None = None
    path: str | None = None
    earlier_path: str | None = None
    earlier_index: int | None = None
    token_offset: int = 0
    common_prefix_tokens: int = 0
    prompt_tokens: int = 0
    static_after_divergence: int = 0
    snippet: str = ""
    earlier_snippet: str = ""
    diff_at: int = 0
    detail: str = ""
    hint: str = ""

    def with_cause(self, cause: str, detail: str = "", *, expected: bool | None = None) -> Divergence:
        """A copy with a runtime cause (``below_minimum``, ``ttl_expired``, ``evicted``, ``no_breakpoint``)
        supplied by the caller; ``expected`` overrides :data:`EXPECTED_CAUSES` (a prompt below the
        model's minimum: ``below_minimum`` with nothing to fix, no hint)."""
        cause = MissCause(cause)
        expected = cause in EXPECTED_CAUSES if expected is None else expected
        return dataclasses.replace(self, cause=cause.value, expected=expected, detail=detail or self.detail,
                                   hint="" if expected else HINTS.get(cause, ""))

    def summary(self) -> str:
        """One line for reports: cause, where, what changed, and the hint (``cause in LAYER at PATH (token N
        of M; ...): detail -> hint``)."""
        where = f" in {self.layer} at {self.path}" if self.path else ""
        return f"{self.cause}{where}{self.problem()[len(self.cause):]}" + (f" -> {self.hint}" if self.hint else "")

    def problem(self) -> str:
        """The cause, the token offset and what changed, without the place or the hint (``cause (token N of M;
        ...): detail``): the text of an error that names the layer and the fix itself
        (:class:`~promptcache.errors.PrefixStabilityError`)."""
        shared = f" (token {self.token_offset:,} of {self.prompt_tokens:,}"
        shared += f"; {self.common_prefix_tokens:,} shared with earlier request index {self.earlier_index})" \
            if self.earlier_index is not None else ")"
        return f"{self.cause}{shared}" + (f": {self.detail}" if self.detail else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dataclasses.asdict(self)
