"""Reproducible prefix-reuse workloads (token ids) and a runner that scores the engine against the oracle.

Each workload is a list of :class:`WorkloadRequest`: tokens appended after an
optional parent request's prompt *and output* (multi-turn chats and branching
continue from what the model really generated). Shapes follow the design doc's
benchmark list: shared system prompt + N questions, few-shot, multi-turn chat,
branching (tree of thought), a random no-reuse control, and a hot/cold mix for
memory pressure.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from local_backend.oracle import PrefixTrieOracle
from local_backend.sampling_params import SamplingParams

if TYPE_CHECKING:
    from local_backend.engine import LocalEngine

TEXT_VOCAB = 100_000
"""Random tokens are drawn below this by default: ordinary cl100k_base tokens, no special ones."""


@dataclass(frozen=True)
class WorkloadRequest:
    """``tokens`` appended to the context of request ``parent`` (its prompt + output), or alone.

    ``priority`` / ``priority_tokens`` feed ``eviction="priority"`` (pin a system prompt).
    """

    tokens: tuple[int, ...]
    parent: int | None = None
    max_tokens: int = 4
    priority: int = 0
    priority_tokens: int | None = None


@dataclass(frozen=True)
class Workload:
    """A named, reproducible list of requests, sent in order by :func:`run_workload`.

    Attributes:
        name: the label benchmark tables show (``"shared-system-prompt"``, ...).
        requests: the requests; a request's ``parent`` indexes an earlier one.
    """

    name: str
    requests: list[WorkloadRequest]


@dataclass
class WorkloadResult:
    """Per-request and total prompt / cached / oracle tokens of one run."""

    name: str
    prompt_tokens: int = 0
    cached_tokens: int = 0
    oracle_tokens: int = 0
    working_set_tokens: int = 0
    requests: list[dict[str, int | float | None]] = field(default_factory=list)

    @property
    def hit_rate(self) -> float:
        """Engine hit tokens / prompt tokens (0.0 without prompts)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def oracle_hit_rate(self) -> float:
        """Oracle (best possible, block-aligned) hit tokens / prompt tokens."""
        return self.oracle_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def hit_over_oracle(self) -> float:
        """Engine hit tokens / oracle tokens (1.0 when both are 0)."""
        return self.cached_tokens / self.oracle_tokens if self.oracle_tokens else 1.0

    def as_dict(self) -> dict[str, float | int | str]:
        """The totals and rates as plain JSON values (per-request rows left out)."""
        return {"workload": self.name, "requests": len(self.requests), "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens, "oracle_tokens": self.oracle_tokens,
                "working_set_tokens": self.working_set_tokens, "hit_rate": self.hit_rate,
                "oracle_hit_rate": self.oracle_hit_rate,
                "hit_over_oracle": self.hit_over_oracle}


def run_workload(engine: LocalEngine, workload: Workload) -> WorkloadResult:
    """Send the requests one at a time (greedy, ``ignore_eos``) and score each hit against the oracle."""
    oracle = PrefixTrieOracle(engine.block_size)
    contexts: list[list[int]] = []
    result = WorkloadResult(workload.name)
    for req in workload.requests:
        prompt = (contexts[req.parent] if req.parent is not None else []) + list(req.tokens)
        best = oracle.hit_tokens(prompt)
        (out,) = engine.generate([prompt], SamplingParams(max_tokens=req.max_tokens, temperature=0.0, ignore_eos=True),
                                 priority=req.priority, priority_tokens=req.priority_tokens)
        output = out.outputs[0].token_ids
        oracle.record(prompt, output)
        contexts.append(prompt + output)
        result.prompt_tokens += len(prompt)
        result.cached_tokens += out.num_cached_tokens
        result.oracle_tokens += best
        result.requests.append({"prompt_tokens": len(prompt), "cached_tokens": out.num_cached_tokens,
                                "oracle_tokens": best, "ttft_s": out.metrics.ttft})
    result.working_set_tokens = oracle.num_nodes  # distinct tokens whose KV existed
    return result


def random_token_ids(rng: random.Random, n: int, vocab: int = TEXT_VOCAB) -> list[int]:
    """``n`` token ids drawn uniformly from ``[0, vocab)`` with ``rng`` (reproducible for a seeded ``rng``)."""
    return [rng.randrange(vocab) for _ in range(n)]


def _tokens(rng: random.Random, n: int, vocab: int) -> tuple[int, ...]:
    return tuple(random_token_ids(rng, n, vocab))


def shared_system_prompt(questions: int = 8, system: int = 600, question: tuple[int, int] = (20, 60),
                         vocab: int = TEXT_VOCAB, seed: int = 1) -> Workload:
    """One system prompt, then ``questions`` different user questions."""
    rng = random.Random(seed)
    sys_tokens = _tokens(rng, system, vocab)
    return Workload("shared-system-prompt", [
        WorkloadRequest(sys_tokens + _tokens(rng, rng.randint(*question), vocab)) for _ in range(questions)
    ])


def few_shot(queries: int = 8, examples: int = 6, example: int = 80, query: tuple[int, int] = (15, 40),
             vocab: int = TEXT_VOCAB, seed: int = 2) -> Workload:
    """A fixed instruction and ``examples`` worked examples, then one query each."""
    rng = random.Random(seed)
    head = _tokens(rng, 40, vocab) + sum((_tokens(rng, example, vocab) for _ in range(examples)), ())
    return Workload("few-shot", [WorkloadRequest(head + _tokens(rng, rng.randint(*query), vocab))
                                 for _ in range(queries)])


def multi_turn(sessions: int = 3, turns: int = 4, first: int = 300, user: tuple[int, int] = (20, 60),
               answer: int = 12, vocab: int = TEXT_VOCAB, seed: int = 3) -> Workload:
    """Chats whose every turn appends the model's answer and a new user message; sessions interleave."""
    rng = random.Random(seed)
    requests: list[WorkloadRequest] = []
    last: dict[int, int] = {}
    for turn in range(turns):
        for s in range(sessions):
            n = first if turn == 0 else rng.randint(*user)
            requests.append(WorkloadRequest(_tokens(rng, n, vocab), parent=last.get(s), max_tokens=answer))
            last[s] = len(requests) - 1
    return Workload("multi-turn", requests)


def branching(depth: int = 3, fanout: int = 2, root: int = 200, step: int = 30, answer: int = 10,
              vocab: int = TEXT_VOCAB, seed: int = 4) -> Workload:
    """Tree of thought: every node continues its parent's prompt and answer with ``fanout`` different steps."""
    rng = random.Random(seed)
    requests = [WorkloadRequest(_tokens(rng, root, vocab), max_tokens=answer)]
    frontier = [0]
    for _ in range(depth):
        nxt = []
        for parent in frontier:
            for _ in range(fanout):
                requests.append(WorkloadRequest(_tokens(rng, step, vocab), parent=parent, max_tokens=answer))
                nxt.append(len(requests) - 1)
        frontier = nxt
    return Workload("branching", requests)


def no_reuse(requests: int = 8, length: int = 300, vocab: int = TEXT_VOCAB, seed: int = 5) -> Workload:
    """Random prompts that share nothing (the control: hit rate and oracle are 0)."""
    rng = random.Random(seed)
    return Workload("no-reuse", [WorkloadRequest(_tokens(rng, length, vocab)) for _ in range(requests)])


def hot_cold_mix(rounds: int = 4, hot_prefixes: int = 2, hot: int = 512, hot_uses: int = 3, cold_docs: int = 4,
                 cold: int = 1024, question: int = 32, vocab: int = TEXT_VOCAB, seed: int = 6) -> Workload:
    """Memory pressure: hot system prompts reused every round, separated by bursts of one-off long documents.

    Hot requests pin their system prompt (``priority=1`` on the first ``hot``
    tokens) for ``eviction="priority"``. LRU loses the hot prompts to each
    burst; LFU and priority keep them.
    """
    rng = random.Random(seed)
    prefixes = [_tokens(rng, hot, vocab) for _ in range(hot_prefixes)]
    requests: list[WorkloadRequest] = []
    for _ in range(rounds):
        for _ in range(hot_uses):
            for prefix in prefixes:
                requests.append(WorkloadRequest(prefix + _tokens(rng, question, vocab), max_tokens=1,
                                                priority=1, priority_tokens=hot))
        for _ in range(cold_docs):
            requests.append(WorkloadRequest(_tokens(rng, cold + question, vocab), max_tokens=1))
    return Workload("hot-cold-mix", requests)


def oracle_workloads(vocab: int = TEXT_VOCAB, scale: float = 1.0) -> list[Workload]:
    """The four reuse shapes of the oracle acceptance test plus the no-reuse control, sizes times ``scale``."""

    def s(n: int) -> int:
        return max(1, int(n * scale))

    return [
        shared_system_prompt(system=s(600), vocab=vocab),
        few_shot(example=s(80), vocab=vocab),
        multi_turn(first=s(300), vocab=vocab),
        branching(root=s(200), vocab=vocab),
        no_reuse(length=s(300), vocab=vocab),
    ]
