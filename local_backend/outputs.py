"""What the engine returns: whole-request outputs (``generate``) and per-step deltas (``step``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from local_backend.request import Request


@dataclass(frozen=True)
class RequestMetrics:
    """Timings (``time.perf_counter()`` seconds) and token counts of one request.

    ``cached_tokens`` is the prefix hit at first admission; ``computed_prompt_tokens``
    the prompt tokens actually run through the model (recomputation after a
    preemption included).
    """

    arrival_time: float
    first_scheduled_time: float | None
    first_token_time: float | None
    last_token_time: float | None
    finished_time: float | None
    prompt_tokens: int
    cached_tokens: int
    computed_prompt_tokens: int
    output_tokens: int
    num_preemptions: int

    @property
    def ttft(self) -> float | None:
        """Time to first token in seconds, from arrival (queueing included)."""
        return None if self.first_token_time is None else self.first_token_time - self.arrival_time

    @property
    def time_per_output_token(self) -> float | None:
        """Mean seconds between output tokens after the first (TPOT); None with fewer than 2 tokens."""
        if self.output_tokens < 2 or self.first_token_time is None or self.last_token_time is None:
            return None
        return (self.last_token_time - self.first_token_time) / (self.output_tokens - 1)

    @property
    def e2e_latency(self) -> float | None:
        """Seconds from arrival to finishing (None while unfinished)."""
        return None if self.finished_time is None else self.finished_time - self.arrival_time

    @classmethod
    def of(cls, request: Request) -> RequestMetrics:
        """The metrics of ``request`` as they stand now."""
        return cls(
            arrival_time=request.arrival_time,
            first_scheduled_time=request.first_scheduled_time,
            first_token_time=request.first_token_time,
            last_token_time=request.last_token_time,
            finished_time=request.finished_time,
            prompt_tokens=request.num_prompt_tokens,
            cached_tokens=max(request.num_cached_tokens, 0),
            computed_prompt_tokens=request.num_computed_prompt_tokens,
            output_tokens=request.num_output_tokens,
            num_preemptions=request.num_preemptions,
        )

    def as_dict(self) -> dict[str, float | int | None]:
        """Token counts and ``*_s`` durations in seconds, as plain JSON values."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "computed_prompt_tokens": self.computed_prompt_tokens,
            "output_tokens": self.output_tokens,
            "num_preemptions": self.num_preemptions,
            "ttft_s": self.ttft,
            "time_per_output_token_s": self.time_per_output_token,
            "e2e_latency_s": self.e2e_latency,
        }


@dataclass(frozen=True)
class CompletionOutput:
    """One generated sequence (vLLM's ``CompletionOutput``). ``text`` is empty without a tokenizer.

    ``finish_reason`` is ``"stop"`` (an end-of-sequence or stop token, the
    token id in ``stop_reason``; or a stop string given to
    :meth:`~local_backend.engine.LocalEngine.finish_request`), ``"length"`` (``max_tokens`` or the context),
    or ``"error"`` (the request failed; ``RequestOutput.error`` says why).
    """

    index: int
    text: str
    token_ids: list[int]
    finish_reason: str | None
    stop_reason: int | str | None = None


@dataclass(frozen=True)
class RequestOutput:
    """A finished request (vLLM's ``RequestOutput`` shape).

    ``error`` is None, or why the request failed (then ``outputs[0].finish_reason``
    is ``"error"`` and its tokens are those produced before the failure).
    """

    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    num_cached_tokens: int
    outputs: list[CompletionOutput]
    finished: bool
    metrics: RequestMetrics = field(repr=False)
    error: str | None = None


@dataclass(frozen=True)
class StepOutput:
    """What one :meth:`LocalEngine.step` produced for one request.

    Attributes:
        new_token_ids: the token sampled this step (one; none when the request failed).
        finished / finish_reason / stop_reason: set on the request's last step
            (``"stop"``, ``"length"`` or ``"error"``; the stop token id). An
            aborted request produces no more step outputs (``abort_request``
            returns True), nor does one ended by
            :meth:`~local_backend.engine.LocalEngine.finish_request`.
        num_cached_tokens: the request's prefix hit (tokens), known from its first step.
        prompt_tokens: prompt length in tokens.
        ttft: seconds from arrival to the first token (None if it failed before one).
        error: None, or why the request failed (``finish_reason == "error"``);
            the engine's other requests are not affected.
    """

    request_id: str
    new_token_ids: list[int]
    finished: bool
    finish_reason: str | None
    stop_reason: int | str | None
    num_cached_tokens: int
    prompt_tokens: int
    ttft: float | None
    error: str | None = None
