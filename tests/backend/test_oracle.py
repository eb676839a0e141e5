"""Hit rate equals the oracle (design doc correctness test 5 and the issue's oracle acceptance test).

With a pool large enough and requests run one at a time, the engine's hit
tokens equal the block-aligned best possible hit of an independent token trie,
exactly, on the shared-system-prompt, few-shot, multi-turn and branching workloads.
"""

from __future__ import annotations

import pytest
from backend_support import VOCAB, cpu_engine

from local_backend.oracle import PrefixTrieOracle
from local_backend.workloads import branching, few_shot, multi_turn, no_reuse, run_workload, shared_system_prompt

WORKLOADS = {
    "shared-system-prompt": lambda: shared_system_prompt(questions=6, system=120, vocab=VOCAB),
    "few-shot": lambda: few_shot(queries=6, examples=4, example=30, vocab=VOCAB),
    "multi-turn": lambda: multi_turn(sessions=2, turns=4, first=70, user=(5, 20), answer=9, vocab=VOCAB),
    "branching": lambda: branching(depth=3, fanout=2, root=50, step=13, answer=7, vocab=VOCAB),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
@pytest.mark.parametrize("block_size", [16, 5])
def test_engine_hits_equal_the_oracle(tiny_model, name, block_size):
    engine = cpu_engine(tiny_model, block_size=block_size, num_blocks=4096 // block_size)
    result = run_workload(engine, WORKLOADS[name]())
    assert result.oracle_tokens > 0
    assert result.hit_over_oracle == 1.0
    assert [r["cached_tokens"] for r in result.requests] == [r["oracle_tokens"] for r in result.requests]
    assert engine.stats()["kv"]["evictions"] == 0


def test_the_no_reuse_control_hits_nothing(llama_model):
    engine = cpu_engine(llama_model, num_blocks=256)
    result = run_workload(engine, no_reuse(requests=4, length=60, vocab=VOCAB))
    assert (result.cached_tokens, result.oracle_tokens, result.hit_over_oracle) == (0, 0, 1.0)


def test_oracle_trie_basics():
    oracle = PrefixTrieOracle(block_size=4)
    oracle.record([1, 2, 3, 4, 5, 6], output_token_ids=[7, 8, 9])  # KV of 1..8 exists, not of 9
    assert oracle.longest_prefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == 8
    assert oracle.hit_tokens([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == 8
    assert oracle.hit_tokens([1, 2, 3, 4, 5, 6, 7, 8]) == 4  # never the last prompt token
    assert oracle.hit_tokens([1, 2, 3, 9]) == 0
    assert oracle.hit_tokens([1, 2, 3, 4, 5, 6], salt="other") == 0
    assert oracle.num_nodes == 8
