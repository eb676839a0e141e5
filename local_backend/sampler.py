"""Sampling next tokens from logits: greedy, temperature, top-k, top-p, per-request seeds.

One request's failure is that request's alone: a row that cannot be sampled
(NaN logits from a model that overflowed, say) is reported in
:attr:`SamplerOutput.errors` and the other rows are sampled as usual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from local_backend.request import Request
from local_backend.sampling_params import SEED_MODULUS


class SamplingError(RuntimeError):
    """One request's logits cannot be sampled (the message says why)."""


@dataclass
class SamplerOutput:
    """What :meth:`Sampler.sample` picked.

    Attributes:
        token_ids: request id -> the sampled token id, for every request that could be sampled.
        errors: request id -> why sampling that request failed (``"SamplingError: ..."``).
    """

    token_ids: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


class Sampler:
    """Picks one token per row of logits under each request's :class:`SamplingParams`.

    Greedy rows (``params.greedy``: temperature below 1e-5) take the argmax.
    Sampled rows divide by the temperature, keep the ``top_k`` most likely
    tokens and the smallest set reaching probability ``top_p``, and draw with
    a CPU ``torch.Generator``: the request's own (seeded with its ``seed`` mod
    2**64), or the engine's (seeded with ``seed`` mod 2**64), so results repeat
    across runs and devices.

    Args:
        seed: the engine's seed, any integer.
    """

    def __init__(self, seed: int = 0) -> None:
        self._default = torch.Generator(device="cpu").manual_seed(seed % SEED_MODULUS)
        self._generators: dict[str, torch.Generator] = {}

    def sample(self, logits: torch.Tensor, requests: list[Request]) -> SamplerOutput:
        """Sample one token for each request.

        Args:
            logits: ``[len(requests), vocab]`` next-token logits, row ``i`` for ``requests[i]``.
            requests: the requests to sample for.

        Returns:
            The token of every request that could be sampled, and the error of
            every one that could not (a row with NaN logits, or any failure while
            sampling it); one request's failure never touches the other rows.
        """
        out = SamplerOutput()
        if not requests:
            return out
        best = logits.argmax(dim=-1, keepdim=True)
        has_nan = torch.isnan(logits.gather(1, best)).squeeze(1).tolist()  # argmax picks a NaN where a row has one
        argmax = best.squeeze(1).tolist()
        for row, request in enumerate(requests):
            try:
                if has_nan[row]:
                    raise SamplingError(
                        "the model produced NaN logits for this request (a numerical overflow: "
                        "float32 or bfloat16 instead of float16 may help)"
                    )
                params = request.sampling_params
                out.token_ids[request.request_id] = argmax[row] if params.greedy else self._draw(logits[row], request)
            except Exception as exc:  # this request fails; the batch goes on
                out.errors[request.request_id] = f"{type(exc).__name__}: {exc}"
        return out

    def _draw(self, logits: torch.Tensor, request: Request) -> int:
        params = request.sampling_params
        scores = logits.float().cpu() / params.temperature
        if 0 < params.top_k < scores.numel():
            kth = torch.topk(scores, params.top_k).values[-1]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        if params.top_p < 1.0:
            sorted_probs, order = probs.sort(descending=True)
            cumulative = sorted_probs.cumsum(0)
            drop = cumulative - sorted_probs >= params.top_p  # keep tokens until the mass reaches top_p
            sorted_probs[drop] = 0.0
            probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
        if not bool(torch.isfinite(probs).all()):
            raise SamplingError(f"temperature {params.temperature} makes the probabilities non-finite")
        return int(torch.multinomial(probs, 1, generator=self._generator(request)).item())

    def _generator(self, request: Request) -> torch.Generator:
        seed = request.sampling_params.generator_seed
        if seed is None:
            return self._default
        gen = self._generators.get(request.request_id)
        if gen is None:
            gen = self._generators[request.request_id] = torch.Generator(device="cpu").manual_seed(seed)
        return gen

    def release(self, request_id: str) -> None:
        """Forget a finished request's generator."""
        self._generators.pop(request_id, None)
