"""Sampling parameters of one request (vLLM's ``SamplingParams`` shape, validated on construction)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from local_backend.errors import InvalidSamplingParamsError

SAMPLING_EPS = 1e-5
"""Temperatures below this are greedy (vLLM's ``_SAMPLING_EPS``): dividing logits by a smaller
temperature overflows float32 to inf, and the probabilities become NaN."""

SEED_MODULUS = 2**64
"""Seeds are reduced modulo this before seeding a ``torch.Generator`` (which takes 64 bits)."""


@dataclass(frozen=True)
class SamplingParams:
    """How to pick output tokens.

    Attributes:
        max_tokens: output tokens to generate at most (>= 1).
        temperature: 0 means greedy (argmax), and so does any temperature below
            :data:`SAMPLING_EPS` (1e-5, as in vLLM); otherwise the logits are
            divided by it before sampling.
        top_p: nucleus sampling, keep the smallest set of tokens whose
            probability mass reaches ``top_p`` (0 < top_p <= 1; 1 disables it).
        top_k: keep the ``top_k`` most likely tokens (0 or -1 disables it).
        seed: per-request seed, any integer; the same seed, prompt and model
            give the same tokens. The generator is seeded with ``seed mod 2**64``
            (:data:`SEED_MODULUS`), so seeds equal modulo 2**64 sample alike
            (``-1`` and ``2**64 - 1``, say).
        stop_token_ids: extra token ids that end generation (the token is kept).
        ignore_eos: keep generating past the tokenizer's end-of-sequence tokens
            (benchmarks use it to get exactly ``max_tokens`` tokens).

    Raises:
        InvalidSamplingParamsError: (a ``ValueError``) on any value out of range.
    """

    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    stop_token_ids: tuple[int, ...] = field(default_factory=tuple)
    ignore_eos: bool = False

    def __post_init__(self) -> None:
        def bad(message: str) -> None:
            raise InvalidSamplingParamsError(message)

        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            bad(f"max_tokens must be an integer >= 1, got {self.max_tokens!r}")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)):
            bad(f"temperature must be a number, got {self.temperature!r}")
        if not math.isfinite(self.temperature) or self.temperature < 0:
            bad(f"temperature must be >= 0 (0 = greedy), got {self.temperature!r}")
        if isinstance(self.top_p, bool) or not isinstance(self.top_p, (int, float)) or not 0 < self.top_p <= 1:
            bad(f"top_p must be in (0, 1], got {self.top_p!r}")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < -1:
            bad(f"top_k must be an integer >= 1, or 0 / -1 to disable it, got {self.top_k!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            bad(f"seed must be an integer or None, got {self.seed!r}")
        stops = self.stop_token_ids
        if stops is None:
            stops = ()
        if isinstance(stops, (str, bytes)) or not all(
            isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in stops
        ):
            bad(f"stop_token_ids must be a list of non-negative integers, got {self.stop_token_ids!r}")
        object.__setattr__(self, "stop_token_ids", tuple(stops))

    @property
    def greedy(self) -> bool:
        """True when tokens are picked by argmax (``temperature < SAMPLING_EPS``)."""
        return self.temperature < SAMPLING_EPS

    @property
    def generator_seed(self) -> int | None:
        """``seed`` reduced to ``[0, 2**64)`` for ``torch.Generator.manual_seed`` (None without a seed)."""
        return None if self.seed is None else self.seed % SEED_MODULUS
