"""Calibration: each simulated request's cache read / write against the usage the provider recorded.

A trace recorded through :func:`promptcache.wrap` or ``promptcache proxy``
carries the provider's ``usage`` object per request (``shared/traces/README.md``).
:func:`check_usage` normalises it (:func:`promptcache.providers.usage.normalize_usage`)
and compares it with the simulated usage, request by request:

- ``exact``: the simulated read and write equal the recorded ones;
- ``within``: both differ by at most ``tolerance`` tokens (default one block,
  :data:`BLOCK_TOKENS` = 128: OpenAI's cached-token step, provider-cache-rules.md
  "OpenAI"; for the other providers the same 128 is an assumption of ours, the
  size of error a stand-in tokenizer makes on a few-thousand-token prefix);
- ``disagrees``: otherwise, with both numbers;
- ``refused``: the provider served the request (it recorded usage) but the simulated rules refuse it. This is
  the strongest sign that a rule changed (or that an assumed refusal is wrong), so it counts as a disagreement.

When the simulated prompt and the recorded one have different sizes (the
simulator counts Claude or a local model with a stand-in tokenizer), the
simulated read and write are first scaled by ``recorded prompt / simulated
prompt``, so the comparison is of where the cache boundary falls, not of two
tokenizers. A disagreement beyond that is the signal that a provider's rule
changed (or the trace is not what was sent): docs/simulate.md says how to report it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from promptcache.providers.apis import api_provider
from promptcache.providers.usage import Usage, normalize_usage
from promptcache.simulate.driver import SimulatedRequest, Simulation

BLOCK_TOKENS = 128
"""Default tolerance, one block: OpenAI's 128-token cached-token step (provider-cache-rules.md); assumed elsewhere."""

EXACT, WITHIN, DISAGREES, REFUSED = "exact", "within", "disagrees", "refused"
DISAGREEING = (DISAGREES, REFUSED)
"""The verdicts counted as disagreeing: a different read / write, or a served request the rules refuse."""


@dataclasses.dataclass(frozen=True)
class UsageCheck:
    """One request: simulated against recorded usage.

    Attributes:
        index, session: the simulated request's.
        predicted: the simulated usage (tokens of the simulator's tokenizer).
        recorded: the provider's usage, normalised.
        scale: ``recorded prompt / predicted prompt`` (1.0 when they agree or one is empty).
        verdict: ``exact``, ``within``, ``disagrees`` or ``refused``.
        refusal: for ``refused``, why the simulated API refuses the request the provider served; else None.
    """

    index: int
    session: str
    predicted: Usage
    recorded: Usage
    scale: float
    verdict: str
    refusal: str | None = None

    @property
    def predicted_read(self) -> int:
        """The simulated read, scaled to the recorded prompt size (tokens)."""
        return round(self.predicted.cache_read * self.scale)

    @property
    def predicted_write(self) -> int:
        """The simulated write (both TTLs), scaled to the recorded prompt size (tokens)."""
        return round(self.predicted.cache_write * self.scale)


@dataclasses.dataclass
class Calibration:
    """Every checked request, the tolerance, and what could not be checked.

    Attributes:
        checks: one :class:`UsageCheck` per request with recorded usage, in trace order.
        tolerance: tokens a ``within`` verdict allows on read and on write.
        unchecked: ``(index, reason)`` of requests without a comparable recorded usage.
    """

    checks: list[UsageCheck]
    tolerance: int
    unchecked: list[tuple[int, str]] = dataclasses.field(default_factory=list)

    def count(self, *verdicts: str) -> int:
        """How many checks have one of ``verdicts``."""
        return sum(1 for check in self.checks if check.verdict in verdicts)

    @property
    def scaled(self) -> int:
        """Checks whose simulated counts were scaled to the recorded prompt size."""
        return sum(1 for check in self.checks if check.scale != 1.0)

    def summary(self) -> str:
        """``"predicted 41 of 43 requests within 1 block (128 tokens): 30 exact, 11 within, 2 disagreeing"``."""
        block = "1 block" if self.tolerance == BLOCK_TOKENS else "the tolerance"
        agreed = self.count(EXACT, WITHIN)
        refused = self.count(REFUSED)
        return (f"predicted {agreed} of {len(self.checks)} request{'' if len(self.checks) == 1 else 's'} within "
                f"{block} ({self.tolerance:,} tokens): {self.count(EXACT)} exact, {self.count(WITHIN)} within, "
                f"{self.count(*DISAGREEING)} disagreeing"
                + (f" ({refused} served by the provider but refused by the rules)" if refused else ""))

    def to_dict(self) -> dict[str, Any]:
        """The ``usage_check`` part of ``simulate --format json``."""
        return {
            "tolerance_tokens": self.tolerance,
            "requests": [{"index": c.index, "session": c.session, "verdict": c.verdict, "refusal": c.refusal,
                          "scale": c.scale,
                          "predicted_read": c.predicted.cache_read, "predicted_write": c.predicted.cache_write,
                          "recorded_read": c.recorded.cache_read, "recorded_write": c.recorded.cache_write,
                          "predicted_prompt": c.predicted.prompt_tokens, "recorded_prompt": c.recorded.prompt_tokens}
                         for c in self.checks],
            "unchecked": [{"index": i, "reason": reason} for i, reason in self.unchecked],
            "summary": {"checked": len(self.checks), "exact": self.count(EXACT), "within": self.count(WITHIN),
                        "disagrees": self.count(*DISAGREEING), "refused": self.count(REFUSED),
                        "text": self.summary()},
        }


def _verdict(predicted: Usage, recorded: Usage, scale: float, tolerance: int) -> str:
    if (predicted.cache_read, predicted.cache_write) == (recorded.cache_read, recorded.cache_write):
        return EXACT
    read = abs(round(predicted.cache_read * scale) - recorded.cache_read)
    write = abs(round(predicted.cache_write * scale) - recorded.cache_write)
    return WITHIN if read <= tolerance and write <= tolerance else DISAGREES


def _comparable(api: str, simulated: str) -> tuple[bool, str | None]:
    """Whether usage recorded from ``api`` can be compared with ``simulated``'s rules, and the shape to read it as
    (None: from its fields; DeepSeek and Gemini answer on OpenAI-compatible endpoints with their own fields)."""
    own = api_provider(api)
    if own == simulated:
        return True, simulated
    if simulated == "bedrock" and own == "anthropic":  # InvokeModel: Claude Messages usage fields
        return True, "anthropic"
    return simulated in ("deepseek", "gemini") and own == "openai", None


def check_usage(simulation: Simulation, *, tolerance: int = BLOCK_TOKENS,
                requests: Iterable[SimulatedRequest] | None = None) -> Calibration:
    """Compare each simulated request with the usage recorded in its trace line.

    Args:
        simulation: a :class:`~promptcache.simulate.driver.Simulation` of a trace whose lines carry ``usage``.
        tolerance: tokens a ``within`` verdict allows, on read and on write (>= 0).

    Returns:
        A :class:`Calibration`; a request with recorded usage that the simulated API refuses is a ``refused``
        check (a disagreement: the provider served it); requests without usage and usage of another
        provider's API (a trace converted to the simulated provider) are listed in ``unchecked``.

    Raises:
        ValueError: ``tolerance`` < 0, or no request of the trace has comparable recorded usage
            (the message says how to record it).
    """
    if tolerance < 0:
        raise ValueError(f"the usage tolerance must be >= 0 tokens, not {tolerance}")
    checks, unchecked = [], []
    for request in simulation.requests if requests is None else requests:
        if request.recorded_usage is None:
            unchecked.append((request.index, "no usage recorded"))
            continue
        comparable, shape = _comparable(request.api, simulation.provider)
        if not comparable:
            unchecked.append((request.index, f"its usage was recorded from {request.api}, not {simulation.provider}"))
            continue
        try:
            recorded = normalize_usage(request.recorded_usage, shape)
        except ValueError as exc:
            unchecked.append((request.index, f"recorded usage not understood: {exc}"))
            continue
        predicted = request.usage
        if request.error:  # the provider served what the rules refuse
            checks.append(UsageCheck(request.index, request.session, predicted, recorded, 1.0, REFUSED,
                                     request.error))
            continue
        total, own = recorded.prompt_tokens, predicted.prompt_tokens
        scale = total / own if total and own and total != own else 1.0
        verdict = _verdict(predicted, recorded, scale, tolerance)
        checks.append(UsageCheck(request.index, request.session, predicted, recorded,
                                 1.0 if verdict == EXACT else scale, verdict))
    if not checks:
        reasons = sorted({reason for _, reason in unchecked}) or ["no requests"]
        raise ValueError("--check-usage: no request of the trace carries usage comparable with the simulation "
                         f"({'; '.join(reasons)}); record the trace with promptcache.wrap(client, trace=...) or "
                         "promptcache proxy, which keep each response's usage")
    return Calibration(checks, tolerance, unchecked)
