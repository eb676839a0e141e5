"""Sampling next tokens from logits: greedy, temperature, top-k, top-p, per-request seeds."""

from __future__ import annotations

import torch

from local_backend.request import Request


class Sampler:
    """Picks one token per row of logits under each request's :class:`SamplingParams`.

    Greedy rows (``temperature == 0``) take the argmax. Sampled rows divide by
    the temperature, keep the ``top_k`` most likely tokens and the smallest
    set reaching probability ``top_p``, and draw with a CPU
    ``torch.Generator``: the request's own (seeded with its ``seed``), or the
    engine's (seeded with ``seed``), so results repeat across runs and devices.
    """

    def __init__(self, seed: int = 0) -> None:
        self._default = torch.Generator(device="cpu").manual_seed(seed)
        self._generators: dict[str, torch.Generator] = {}

    def sample(self, logits: torch.Tensor, requests: list[Request]) -> list[int]:
        """``logits``: ``[len(requests), vocab]``. Returns one token id per request."""
        tokens = logits.argmax(dim=-1).tolist()
        for row, request in enumerate(requests):
            params = request.sampling_params
            if params.greedy:
                continue
            scores = logits[row].float().cpu() / params.temperature
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
            tokens[row] = int(torch.multinomial(probs, 1, generator=self._generator(request)).item())
        return tokens

    def _generator(self, request: Request) -> torch.Generator:
        seed = request.sampling_params.seed
        if seed is None:
            return self._default
        gen = self._generators.get(request.request_id)
        if gen is None:
            gen = self._generators[request.request_id] = torch.Generator(device="cpu").manual_seed(seed)
        return gen

    def release(self, request_id: str) -> None:
        """Forget a finished request's generator."""
        self._generators.pop(request_id, None)
