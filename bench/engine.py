#!/usr/bin/env python3
"""Engine benchmarks: TTFT cold vs warm, throughput vs transformers' generate / generate_batch,
the no-reuse control, KV fragmentation, eviction policies, hit rate vs the oracle.

Same as ``promptcache engine-bench`` (see ``--help``): a rich table on stderr, JSON on stdout.

    .venv/bin/python bench/engine.py > bench-engine.json
    .venv/bin/python bench/engine.py --quick
"""

from promptcache.commands.engine_bench import engine_bench

if __name__ == "__main__":
    engine_bench()
