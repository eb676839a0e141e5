"""Sampling next tokens from logits: greedy, temperature, top-k, top-p, per-request seeds.

One request's failure is that request's alone: a row that cannot be sampled
(NaN logits from a model that overflowed, say) is reported in
:attr:`SamplerOutput.errors` and the other rows are sampled as usual.

Cost per token on a 100k vocabulary (``bench/sampler.py``): greedy rows take one
argmax; sampled rows take a softmax, one float64 cumulative sum (whose last
value checks the whole row for NaN and infinity) and a draw by inverse CDF from
a single uniform number. Top-k takes one ``torch.topk`` of ``k + 1`` tokens, and
scans the row for tokens tied at the k-th place only when the ``k + 1``-th ties
with the k-th. Top-p draws from the full distribution and keeps the
token when it lies in the nucleus (rejection sampling: the accepted token
follows the nucleus distribution exactly, and at least ``top_p`` of the draws
are accepted); after :data:`MAX_REJECTIONS` rejections it sorts once. Nothing
sorts the whole vocabulary on the common path: a flat distribution (the
embedded random-weight model's nucleus at top-p 0.9 is three quarters of the
vocabulary) costs the same as a peaked one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from local_backend.request import Request
from local_backend.sampling_params import SEED_MODULUS

MAX_REJECTIONS = 32
"""Top-p draws outside the nucleus tolerated before the sampler sorts the row instead. Each rejection has
probability ``1 - nucleus mass <= 1 - top_p``, so the sort is rare (below 1e-9 for top_p >= 0.5); a
rejection costs one masked sum over the vocabulary, about 1/30 of a full sort of 100k tokens."""

OVERFLOW_HINT = "a numerical overflow: float32 or bfloat16 instead of float16 may help"
NAN_LOGITS = f"the model produced a NaN logit at this position ({OVERFLOW_HINT})"
INF_LOGITS = f"the model produced a +inf logit at this position ({OVERFLOW_HINT}); sampling needs finite logits"
NO_FINITE_LOGITS = "every logit the model produced at this position is -inf: no token can be chosen"


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

    Greedy rows (``params.greedy``: temperature below 1e-5) take the argmax
    (a +inf logit is the argmax and is picked; a NaN logit, or a row of -inf
    only, fails the request as it does a sampled row).
    Sampled rows divide by the temperature, keep every token whose score is at
    least the ``top_k``-th largest (so tokens tied at the k-th place are all
    kept, as in transformers' ``TopKLogitsWarper`` and vLLM), then the nucleus:
    every token whose more likely tokens hold less than ``top_p`` of the
    probability (the smallest set reaching ``top_p``, as in the nucleus sampling
    paper, Holtzman et al. 2020, with tokens tied at its edge all kept). A
    sampled row with a NaN or +inf logit fails its request. They draw with a
    CPU ``torch.Generator``: the request's own (seeded with its ``seed`` mod
    2**64), or the engine's (seeded with ``seed`` mod 2**64), one float64
    uniform number per token in the common case. The random stream of a seed is
    the same on every run and device, so the same logits give the same tokens;
    the logits themselves differ between devices and dtypes (CUDA bf16 against
    CPU fp32, say), so the tokens of a seed repeat across runs on one device
    and dtype, not necessarily across devices.

    Args:
        seed: the engine's seed, any integer.
    """

    def __init__(self, seed: int = 0) -> None:
        self._default = torch.Generator(device="cpu").manual_seed(seed % SEED_MODULUS)
        self._generators: dict[str, torch.Generator] = {}

    def sample(self, logits: torch.Tensor, requests: list[Request]) -> SamplerOutput:
        """Sample one token for each request.

        Args:
            logits: ``[len(requests), vocab]`` next-token logits, row ``i`` for ``requests[i]``
                (any device and float dtype; sampled rows are drawn on the CPU in float32).
            requests: the requests to sample for.

        Returns:
            The token of every request that could be sampled, and the error of
            every one that could not (a row with NaN logits, or any failure while
            sampling it); one request's failure never touches the other rows.
        """
        out = SamplerOutput()
        greedy = [i for i, request in enumerate(requests) if request.sampling_params.greedy]
        drawn = [i for i, request in enumerate(requests) if not request.sampling_params.greedy]
        if greedy:
            rows = logits if len(greedy) == len(requests) else logits[greedy]
            best = rows.argmax(dim=-1, keepdim=True)
            value = rows.gather(1, best)  # NaN where a row has one (argmax picks it); -inf where all are -inf
            flags = torch.cat((torch.isnan(value), torch.isneginf(value)), 1).tolist()  # one transfer
            for i, token, (nan, no_finite) in zip(greedy, best.squeeze(1).tolist(), flags):
                self._record(out, requests[i], lambda t=token, n=nan, f=no_finite: _checked(t, n, f))
        if drawn:
            rows = (logits if len(drawn) == len(requests) else logits[drawn]).float().cpu()  # one transfer
            for i, row in zip(drawn, rows):
                self._record(out, requests[i], lambda row=row, request=requests[i]: self._draw(row, request))
        return out

    @staticmethod
    def _record(out: SamplerOutput, request: Request, pick) -> None:
        try:
            out.token_ids[request.request_id] = pick()
        except Exception as exc:  # this request fails; the batch goes on
            out.errors[request.request_id] = f"{type(exc).__name__}: {exc}"

    def _draw(self, logits: torch.Tensor, request: Request) -> int:
        """One token from a ``[vocab]`` float32 CPU row under the request's temperature, top-k and top-p."""
        params = request.sampling_params
        scores, candidates = logits / params.temperature, None
        if 0 < params.top_k < scores.numel():
            scores, candidates = _top_k(scores, params.top_k)  # sorted, most likely first
        probs = torch.softmax(scores, dim=-1)
        cumulative = probs.cumsum(0, dtype=torch.float64)
        if not math.isfinite(total := float(cumulative[-1])) or total <= 0:  # a NaN or inf anywhere reaches the sum
            raise SamplingError(_why_unsampleable(logits, params.temperature))
        generator = self._generator(request)
        if params.top_p >= 1.0:
            token = _inverse_cdf(cumulative, generator)
        elif candidates is not None:  # already sorted: the nucleus is a prefix
            token = _inverse_cdf(cumulative[:_nucleus_size(probs, cumulative, params.top_p)], generator)
        else:
            token = _draw_nucleus(probs, cumulative, params.top_p, generator)
        return int(candidates[token]) if candidates is not None else token

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


def _checked(token: int, nan: bool, no_finite: bool) -> int:
    if nan:
        raise SamplingError(NAN_LOGITS)
    if no_finite:
        raise SamplingError(NO_FINITE_LOGITS)
    return token


def _why_unsampleable(logits: torch.Tensor, temperature: float) -> str:
    """Why a ``[vocab]`` row of raw logits gave no finite probabilities under ``temperature`` (the error path only)."""
    if bool(torch.isnan(logits).any()):
        return NAN_LOGITS
    if bool(torch.isposinf(logits).any()):
        return INF_LOGITS
    if bool(torch.isneginf(logits).all()):
        return NO_FINITE_LOGITS
    return (f"temperature {temperature} makes the probabilities non-finite (the logits divided by it overflow "
            "float32); use a larger temperature, or 0 for greedy")


def _top_k(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every token of ``scores`` (``[vocab]``, ``0 < k < vocab``) whose score is >= the k-th largest, most likely first.

    Returns ``(values, token_ids)``, both ``[n]`` with ``n >= k``: more than ``k``
    when tokens tie with the k-th (transformers' ``TopKLogitsWarper`` and vLLM keep
    them too; in bf16 logits such ties are common). One ``torch.topk`` of ``k + 1``
    tokens tells whether any token outside the top k ties with the k-th; only then
    is the row scanned for the tied tokens. A k-th score of -inf keeps the top ``k``
    only (the tied tokens have probability 0). A row holding a NaN keeps the top
    ``k`` too, the NaN among them (``torch.topk`` ranks NaN first), so the draw
    fails on it: the re-scan ``scores >= threshold`` would drop the NaN.
    """
    values, token_ids = torch.topk(scores, k + 1)  # sorted, most likely first; a NaN comes first
    top, threshold, next_score = values[[0, k - 1, k]].tolist()
    if next_score != threshold or threshold == -math.inf or math.isnan(top):  # no tie to scan for, or a NaN row
        return values[:k], token_ids[:k]
    token_ids = (scores >= threshold).nonzero().squeeze(1)
    values, order = scores[token_ids].sort(descending=True, stable=True)
    return values, token_ids[order]


def _inverse_cdf(cumulative: torch.Tensor, generator: torch.Generator) -> int:
    """The index drawn from ``cumulative`` (``[n]`` float64 running sums of non-negative weights, last > 0).

    One uniform number ``u`` in [0, 1): the first index whose running sum exceeds
    ``u * total``. A zero-weight index is never drawn.
    """
    target = torch.rand(1, dtype=torch.float64, generator=generator) * cumulative[-1]
    index = int(torch.searchsorted(cumulative, target, right=True))
    if index == cumulative.numel():  # u * total rounded up to the total: the last index with weight
        index = int(torch.searchsorted(cumulative, cumulative[-1:], right=False))
    return index


def _nucleus_size(sorted_probs: torch.Tensor, cumulative: torch.Tensor, top_p: float) -> int:
    """How many of ``sorted_probs`` (``[n]``, most likely first) form the nucleus of ``top_p``, ties kept."""
    keep = int((cumulative - sorted_probs < top_p).sum())  # >= 1: nothing comes before the first token
    return int((sorted_probs >= sorted_probs[keep - 1]).sum())


def _draw_nucleus(probs: torch.Tensor, cumulative: torch.Tensor, top_p: float, generator: torch.Generator) -> int:
    """A token of the ``top_p`` nucleus of ``probs`` (``[vocab]``, unsorted), drawn in proportion to its probability.

    Rejection sampling: draw from the whole distribution and accept a token
    when the tokens more likely than it hold less than ``top_p``; after
    :data:`MAX_REJECTIONS` rejections, sort once and draw from the nucleus.
    """
    for _ in range(MAX_REJECTIONS):
        token = _inverse_cdf(cumulative, generator)
        more_likely = torch.where(probs > probs[token], probs, 0.0).sum(dtype=torch.float64)
        if float(more_likely) < top_p:
            return token
    sorted_probs, order = probs.sort(descending=True)
    sorted_cumulative = sorted_probs.cumsum(0, dtype=torch.float64)
    size = _nucleus_size(sorted_probs, sorted_cumulative, top_p)
    return int(order[_inverse_cdf(sorted_cumulative[:size], generator)])
