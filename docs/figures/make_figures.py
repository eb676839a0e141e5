"""Regenerate the figures of the docs from real runs of the project: ``make figures`` (about two minutes).

    .venv/bin/python docs/figures/make_figures.py [--only NAME ...]

Writes, beside this script:

- ``prompt_layers.png``: the six prompt layers of a support-bot prompt (built with the SDK, token spans
  from the classifier's ChatML rendering) and where each of the four classic mistakes makes the next
  request diverge (the classifier's :func:`promptcache.misses.guard.compare_bodies` on real bodies);
- ``hit_rate_per_request.png``: ``simulate``'s per-request hit rate on the shared traces
  ``good_support_chat.jsonl`` and ``bad_timestamp_system.jsonl`` (``../shared/traces`` beside the checkout,
  or ``PROMPTCACHE_SHARED``);
- ``ttft_cold_warm.png``: time to first token of the embedded model on the local engine (one torch thread),
  cold (empty cache) and warm (the prefix cached), against the cached prefix length: the CPU time of the
  thread that runs the request is plotted, the wall-clock TTFT printed (a shared machine's wall clock is
  mostly other processes');
- ``block_table.png``: the block tables of two running requests that share a prefix, read from the
  engine's block manager (``engine.kv``) after both prefills;
- ``report_good.png`` / ``report_bad.png``: ``promptcache report`` on those two traces, in Debian's
  chromium through Playwright (skipped when there is no chromium).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "examples"))

LAYER_COLOURS = {"tools": "#6f42c1", "system": "#1864ab", "documents": "#0b7285", "examples": "#5c940d",
                 "history": "#e8590c", "turn": "#c2255c"}
GREEN, RED, GREY = "#2f9e44", "#cf222e", "#8c959f"
API = "anthropic.messages"
MODEL = "claude-sonnet-4-6"


def _shared() -> Path:
    for candidate in (os.environ.get("PROMPTCACHE_SHARED"), ROOT.parent / "shared", ROOT / "shared"):
        if candidate and (Path(candidate) / "traces").is_dir():
            return Path(candidate)
    raise SystemExit("no shared folder with traces/: put ../shared beside the checkout or set PROMPTCACHE_SHARED")


OUT = HERE  # --out DIR writes elsewhere (tests)


def _save(fig, name: str) -> None:
    path = OUT / name
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {path}")


# --- 1. the six layers and the four classic mistakes --------------------------------------------------------
def _six_layer_prompt(question: str, history: list[dict]):
    from support_bot import INSTRUCTIONS, POLICIES, TOOLS

    from promptcache import PromptBuilder

    handbook = "# Harborline support handbook\n\n" + "\n\n".join(f"## {t}\n{text}" for t, text in POLICIES)
    builder = (PromptBuilder().tools(TOOLS).system(INSTRUCTIONS).document(handbook, name="handbook")
               .example("Where is order HB-100?", "Let me look it up (lookup_order) before I answer.")
               .example("Can I return worn boots?", "Worn items can be exchanged within 45 days (handbook 2).")
               .history(history).user(question))
    return builder.build()


def _layer_spans(prompt) -> list[tuple[str, int, int]]:
    """(layer, first token, end token) of each layer, in the classifier's ChatML tokens."""
    from promptcache.misses.rendering import decompose
    from promptcache.tokens.chatml import chatml_encoding

    rendering = decompose(prompt.to_anthropic(MODEL), API, layers=prompt.layer_hints(API))
    encoding, ends, total = chatml_encoding(), [], 0
    for token in rendering.tokens:
        total += len(encoding.decode_single_token_bytes(token))
        ends.append(total)
    import bisect

    spans: list[list] = []  # the content pieces decide a layer; framing joins the layer before it
    for piece in rendering.pieces:
        if piece.framing:
            continue
        start = bisect.bisect_right(ends, piece.start)
        if spans and spans[-1][0] == piece.layer:
            continue
        if spans:
            spans[-1][2] = start
        spans.append([piece.layer, start, 0])
    spans[0][1], spans[-1][2] = 0, len(rendering.tokens)
    return [tuple(s) for s in spans]


def _mistakes():
    """(label, earlier body, new body) of a good next turn and of the four classic mistakes."""
    import copy

    turn1 = [{"role": "user", "content": "My tent pole cracked. What are my options?"},
             {"role": "assistant", "content": "Tents carry a three-year warranty (handbook 4): we can replace it."}]
    earlier = _six_layer_prompt("My tent pole cracked. What are my options?", []).to_anthropic(MODEL)
    new = _six_layer_prompt("Can I get a replacement pole instead?", turn1).to_anthropic(MODEL)

    def system_with(body, text):
        body = copy.deepcopy(body)
        body["system"][0]["text"] = text + body["system"][0]["text"]
        return body

    timestamp = (system_with(earlier, "Current time: 2026-03-18T14:00:00Z\n"),
                 system_with(new, "Current time: 2026-03-18T14:01:32Z\n"))
    summary_old, summary_new = copy.deepcopy(earlier), copy.deepcopy(new)
    summary_old["messages"].insert(0, {"role": "user", "content": "Summary so far: (none)"})
    summary_old["messages"].insert(1, {"role": "assistant", "content": "Noted."})
    summary_new["messages"][0:2] = [{"role": "user", "content": "Summary so far: a cracked tent pole; warranty."},
                                    {"role": "assistant", "content": "Noted."}]
    shuffled = copy.deepcopy(new)
    shuffled["tools"] = list(reversed(shuffled["tools"]))
    spaced = copy.deepcopy(new)
    spaced["system"][0]["text"] = spaced["system"][0]["text"].replace(". ", ".  ", 1)
    return [("good: the next turn appends", earlier, new),
            ("timestamp in the system prompt", *timestamp),
            ("history re-summarised each turn", summary_old, summary_new),
            ("tools in another order", earlier, shuffled),
            ("whitespace drift (two spaces)", earlier, spaced)], new


def prompt_layers() -> None:
    from promptcache.misses.guard import compare_bodies

    cases, good_new = _mistakes()
    turn1 = [{"role": "user", "content": "My tent pole cracked. What are my options?"},
             {"role": "assistant", "content": "Tents carry a three-year warranty (handbook 4): we can replace it."}]
    spans = _layer_spans(_six_layer_prompt("Can I get a replacement pole instead?", turn1))
    total = spans[-1][2]
    fig, ax = plt.subplots(figsize=(10, 4.6))
    rows = len(cases)
    for i, (label, earlier, new) in enumerate(cases):
        y = rows - i
        d = compare_bodies((API, new), [(API, earlier)])
        cut = d.token_offset
        for layer, start, end in spans:
            ax.barh(y, end - start, left=start, height=0.5, color=LAYER_COLOURS[layer], alpha=0.9, edgecolor="white")
        ax.barh(y, total - cut, left=cut, height=0.5, color="white", alpha=0.72, hatch="///", edgecolor=GREY,
                linewidth=0)
        ax.plot([0, cut], [y + 0.36, y + 0.36], color=GREEN, linewidth=4, solid_capstyle="butt")
        ax.plot([cut, cut], [y - 0.3, y + 0.42], color=GREEN if d.expected else RED, linewidth=2.5)
        colour = GREEN if d.expected else RED
        where = f"{d.cause} in {d.layer} at token {cut:,}" if not d.expected else f"cached up to token {cut:,}"
        ax.text(-12, y, label, ha="right", va="center", fontsize=10, fontweight="bold", color=colour)
        right = cut > total * 0.6
        ax.text(cut - 8 if right else cut + 8, y + 0.36, where, va="center", fontsize=8.5, color=colour,
                ha="right" if right else "left", bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    y0, previous = rows + 0.7, -100.0
    for layer, start, end in spans:
        middle = (start + end) / 2
        lift = 0.3 if middle - previous < 40 else 0.0  # a narrow neighbour: one line up
        previous = middle if not lift else previous
        ax.text(middle, y0 + lift, layer, ha="center", va="bottom", fontsize=9, color=LAYER_COLOURS[layer],
                fontweight="bold")
    ax.set_xlim(0, total)
    ax.set_ylim(0.4, rows + 1.35)
    ax.set_yticks([])
    ax.set_xlabel("prompt tokens of the next request (ChatML rendering, cl100k)")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title("Six layers, one cached prefix (green line): where each classic mistake cuts it", loc="left",
                 fontsize=11.5)
    _save(fig, "prompt_layers.png")


# --- 2. hit rate per request, good vs bad ---------------------------------------------------------------------
def hit_rate_per_request() -> None:
    from promptcache.simulate import simulate_trace

    traces = _shared() / "traces"
    fig, ax = plt.subplots(figsize=(10, 3.6))
    width = 0.4
    for offset, (name, colour) in zip((-width / 2, width / 2), (("good_support_chat.jsonl", GREEN),
                                                                ("bad_timestamp_system.jsonl", RED))):
        simulation = simulate_trace(traces / name)
        rates = [100 * r.usage.hit_rate for r in simulation.requests]
        total = simulation.summary()["hit_rate"]
        ax.bar([i + offset for i in range(len(rates))], rates, width, color=colour,
               label=f"{name}: {total:.1%} read")
        ax.plot([i + offset for i, r in enumerate(rates) if r < 1], [0.8] * sum(r < 1 for r in rates), "_",
                color=colour, markersize=9, markeredgewidth=2.5)  # 0% stays visible
    ax.set_xticks(range(len(rates)))
    ax.set_xlabel("request (trace order; 3 sessions interleaved)")
    ax.set_ylabel("prompt tokens read from cache (%)")
    ax.set_ylim(0, 128)
    ax.set_yticks(range(0, 101, 20))
    ax.legend(loc="upper left", fontsize=9, ncol=2, frameon=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title("simulate, Anthropic rules: the same chat with and without a timestamp in the system prompt",
                 loc="left", fontsize=11)
    _save(fig, "hit_rate_per_request.png")


# --- 3. TTFT cold vs warm ------------------------------------------------------------------------------------------
def _first_token(engine, prompt: list[int]) -> tuple[float, float, int]:
    """(CPU seconds of this thread, wall TTFT seconds, cached tokens) of one request generating one token."""
    import time

    from local_backend.benchmarks.ttft import ONE_TOKEN

    start = time.thread_time()
    (out,) = engine.generate([prompt], ONE_TOKEN)
    return time.thread_time() - start, out.metrics.ttft, out.num_cached_tokens


def ttft_cold_warm() -> None:
    """Time to first token, cold and warm, on one torch thread: the CPU time of the thread that runs the
    request (solid; robust on a shared machine) and the wall-clock TTFT measured at the same time (dashed)."""
    import random

    from local_backend.benchmarks.timing import cold_cache
    from local_backend.engine import LocalEngine
    from local_backend.workloads import random_token_ids

    engine = LocalEngine(kv_cache_mb=256, num_threads=1)
    suffix, repeats, rng = 16, 3, random.Random(0)
    _first_token(engine, random_token_ids(rng, 32))  # warm-up: first-call allocations are not TTFT
    rows = []
    for prefix in (0, 256, 512, 768, 1024):
        shared = random_token_ids(rng, prefix)
        first, second = shared + random_token_ids(rng, suffix), shared + random_token_ids(rng, suffix)
        cold, warm = [], []
        for _ in range(repeats):
            cold_cache(engine)
            cold.append(_first_token(engine, second))
            cold_cache(engine)
            _first_token(engine, first)
            warm.append(_first_token(engine, second))
        best_cold, best_warm = min(cold), min(warm)
        rows.append((best_warm[2], best_cold[0], best_warm[0], min(c[1] for c in cold), min(w[1] for w in warm)))
        print(f"prefix {prefix:>5} cached {best_warm[2]:>5}: CPU cold {1000 * best_cold[0]:7.0f} ms, warm "
              f"{1000 * best_warm[0]:5.0f} ms; wall TTFT cold {1000 * min(c[1] for c in cold):7.0f} ms, warm "
              f"{1000 * min(w[1] for w in warm):5.0f} ms")
    x = [row[0] for row in rows]
    load = os.getloadavg()[0]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(x, [1000 * row[1] for row in rows], "o-", color=RED, label="cold: empty cache, whole prompt prefilled")
    ax.plot(x, [1000 * row[2] for row in rows], "o-", color=GREEN,
            label=f"warm: prefix cached, {suffix} new tokens prefilled")
    ax.plot(x, [1000 * row[3] for row in rows], "o--", color=RED, alpha=0.35, markersize=4,
            label=f"wall-clock TTFT, cold and warm (shared machine, load average {load:.0f})")
    ax.plot(x, [1000 * row[4] for row in rows], "o--", color=GREEN, alpha=0.35, markersize=4)
    ax.annotate(f"{rows[-1][1] / rows[-1][2]:.0f}x less", (x[-1], 1000 * rows[-1][2]),
                xytext=(x[-1] * 0.7, 1000 * rows[-1][1] * 0.5), fontsize=10,
                arrowprops={"arrowstyle": "->", "color": GREY})
    ax.set_xlabel(f"cached prefix length (tokens; prompt = prefix + {suffix} new tokens)")
    ax.set_ylabel(f"time to first token (ms, best of {repeats})")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=9, loc="upper left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title("Local engine, embedded model, 1 CPU thread: time to first token, cold vs warm\n"
                 "(solid: CPU time of the thread running the request; dashed: wall clock)", loc="left", fontsize=10.5)
    _save(fig, "ttft_cold_warm.png")


# --- 4. a paged KV block table ----------------------------------------------------------------------------------
def block_table() -> None:
    import textwrap

    from local_backend.engine import LocalEngine
    from local_backend.sampling_params import SamplingParams

    engine = LocalEngine(block_size=16, num_blocks=24)
    system = ("You are Harbor, the chat assistant of Harborline Outfitters, an online shop for camping gear. "
              "Answer in two to four short sentences and quote the handbook section you rely on. Use the tools "
              "to look orders up; never guess an order status.")
    params = SamplingParams(max_tokens=8, temperature=0.0, ignore_eos=True)
    prompts = {"A": system + " Customer: my tent pole cracked, what now?",
               "B": system + " Customer: where is my order HB-100, please?"}
    engine.add_request("A", prompts["A"], params)
    engine.step()  # A's prefill: its full blocks enter the prefix cache
    engine.add_request("B", prompts["B"], params)
    engine.step()  # B's prefill reuses A's prefix blocks
    kv, requests = engine.kv, engine._requests  # the block manager's state while both still run
    tables = {name: kv.block_table(requests[name]) for name in prompts}
    pool, tokenizer = kv.pool.blocks, engine.tokenizer
    shared = set(tables["A"]) & set(tables["B"])
    used = sorted(set(tables["A"]) | set(tables["B"]))
    rows = {"A": 3.1, "B": 0.0}
    pool_y, height = 1.55, 0.8
    fig, ax = plt.subplots(figsize=(11, 5.2))
    slot = {block_id: k for k, block_id in enumerate(used)}
    for k, block_id in enumerate(used):
        edge = GREEN if block_id in shared else GREY
        ax.add_patch(Rectangle((k, pool_y), 0.92, height, facecolor="white", edgecolor=edge, linewidth=2))
        ax.text(k + 0.46, pool_y + height / 2, f"block {block_id}\nref_cnt {pool[block_id].ref_cnt}", ha="center",
                va="center", fontsize=8.5, color="#1f2328")
    for name, y in rows.items():
        request = requests[name]
        prompt = request.prompt_token_ids
        ax.text(-0.25, y + height / 2, f"request {name}\n{request.num_prompt_tokens} prompt tokens\n"
                f"{request.num_cached_tokens} cached", ha="right", va="center", fontsize=9.5)
        for j, block_id in enumerate(tables[name]):
            colour = GREEN if block_id in shared else ("#4c8ddf" if name == "A" else "#e8a33d")
            ax.add_patch(Rectangle((j, y), 0.92, height, color=colour, alpha=0.9))
            ax.text(j + 0.46, y + height - 0.16, f"{j} \u2192 {block_id}", ha="center", va="center", color="white",
                    fontsize=9.5, fontweight="bold")
            text = tokenizer.decode(prompt[j * 16:(j + 1) * 16]).strip()
            ax.text(j + 0.46, y + 0.3, "\n".join(textwrap.wrap(text, 15)[:3]), ha="center", va="center",
                    fontsize=6.3, color="white", linespacing=1.05)
            top = y if y > pool_y else y + height
            bottom = pool_y + height if y > pool_y else pool_y
            ax.add_patch(FancyArrowPatch((j + 0.46, top), (slot[block_id] + 0.46, bottom), arrowstyle="-|>",
                                         mutation_scale=8, color=GREEN if block_id in shared else GREY,
                                         alpha=0.7, linewidth=1.1))
    ax.text(-0.25, pool_y + height / 2, "block pool\n(physical blocks\nin use)", ha="right", va="center",
            fontsize=9.5)
    ax.text(len(used) + 0.1, rows["A"] + height / 2, "block table:\nlogical \u2192 physical", fontsize=8.5,
            va="center", color="#57606a")
    ax.set_xlim(-2.3, len(used) + 1.6)
    ax.set_ylim(-0.2, 4.1)
    ax.axis("off")
    ax.set_title(f"Two running requests, 16-token blocks: the {len(shared)} full blocks of their common prefix "
                 "are the same physical blocks (ref_cnt 2)", loc="left", fontsize=10.5)
    _save(fig, "block_table.png")


# --- 5. the HTML report, in chromium -------------------------------------------------------------------------
def report_screenshots() -> None:
    import shutil
    import subprocess
    import tempfile

    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    if chromium is None:
        print("skipped report_*.png: no chromium on PATH (apt-get install chromium)")
        return
    from playwright.sync_api import sync_playwright

    traces = _shared() / "traces"
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for name, out in (("good_support_chat.jsonl", "report_good.png"), ("bad_timestamp_system.jsonl",
                                                                             "report_bad.png")):
            html = Path(tmp) / f"{name}.html"
            subprocess.run([sys.executable, "-m", "promptcache.cli", "report", str(traces / name), "-o", str(html)],
                           check=True, capture_output=True)
            page.goto(html.as_uri())
            page.screenshot(path=str(OUT / out), full_page=True)
            print(f"wrote {OUT / out}")
        browser.close()


FIGURES = {"prompt_layers": prompt_layers, "hit_rate_per_request": hit_rate_per_request,
           "ttft_cold_warm": ttft_cold_warm, "block_table": block_table, "report_screenshots": report_screenshots}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(FIGURES), help="regenerate only these figures")
    parser.add_argument("--out", type=Path, default=HERE, help="write the files here [default: beside this script]")
    args = parser.parse_args(argv)
    global OUT
    OUT = args.out
    for name in args.only or FIGURES:
        FIGURES[name]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
