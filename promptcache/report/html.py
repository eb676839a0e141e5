"""The cache report as one self-contained HTML page: inline SVG bars, inline CSS and script, no network.

:func:`render_html` turns a :class:`~promptcache.report.model.CacheReport` into
the page; :func:`write_html` writes it. The page has, at the top, the verdict
(green for a good trace, red for a bad one), the hit rate against the oracle,
the input cost with and without caching and the top unexpected miss causes;
below, one row per request (``div.request``) with its session, a stacked bar
(``svg.bar``: cached / written / uncached tokens, length proportional to the
prompt, a black tick at the oracle's best) and the miss cause. Clicking a row
shows its first divergence (layer, block path, token offset, a character diff
around the differing token) in the side panel. The style and script are
``page.css`` and ``page.js`` beside this module, inlined.
"""

from __future__ import annotations

import html
import json
import os
from importlib import resources

from promptcache.report.model import CacheReport, Row

_WIDTH = 1000
"""The bars' SVG user units for the longest prompt of the trace."""
_PALETTE = ("#6f42c1", "#0b7285", "#c2255c", "#5c940d", "#e8590c", "#1864ab", "#862e9c", "#2b8a3e",
            "#a61e4d", "#364fc7")
"""Session colours, assigned in order of first appearance."""
_SOURCES = {
    "simulate": "simulate's numbers (the provider's documented cache rules); oracle: the longest prefix shared "
                "with any earlier request, rounded as the provider rounds",
    "verify": "verify's numbers (a replay on a real prefix cache); oracle: the longest block-aligned prefix "
              "computed before the request",
}


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def amount(value: float, unit: str) -> str:
    """``$0.0225`` for USD, else ``5,577 prefill tokens`` (the unit named)."""
    return f"${value:,.4f}" if unit == "USD" else f"{value:,.0f} {unit}"


def bar_svg(row: Row, longest: int) -> str:
    """The stacked bar of one request: ``svg.bar`` with ``rect.cached``, ``rect.written``, ``rect.uncached``
    (widths in tokens scaled so that ``longest`` prompt tokens fill the bar) and ``line.oracle`` at the oracle."""
    scale = _WIDTH / max(longest, 1)
    parts, x = [], 0.0
    for name, tokens in (("cached", row.cached), ("written", row.written), ("uncached", row.uncached)):
        if tokens:
            width = tokens * scale
            parts.append(f'<rect class="{name}" x="{x:.2f}" y="2" width="{width:.2f}" height="16"/>')
            x += width
    if row.error is None:
        ox = min(row.oracle * scale, _WIDTH - 1)
        parts.append(f'<line class="oracle" x1="{ox:.2f}" x2="{ox:.2f}" y1="0" y2="20"/>')
    title = (f"#{row.index} {row.session}: {row.prompt:,} prompt tokens, {row.cached:,} cached, "
             f"{row.written:,} written, {row.uncached:,} uncached; oracle {row.oracle:,}")
    if row.error:
        title = f"#{row.index} {row.session}: refused: {row.error}"
    return (f'<svg class="bar" viewBox="0 0 {_WIDTH} 20" preserveAspectRatio="none" role="img" '
            f'aria-label="{_e(title)}"><title>{_e(title)}</title>{"".join(parts)}</svg>')


def _cause_badge(row: Row) -> str:
    if row.error:
        return '<span class="cause bad">refused</span>'
    if row.cause is None:
        return '<span class="cause hit">hit</span>'
    kind = "ok" if row.expected else "bad"
    return f'<span class="cause {kind}">{_e(row.cause)}</span>'


def _rows(report: CacheReport) -> str:
    longest = max((r.prompt for r in report.rows), default=1)
    colours: dict[str, str] = {}
    out = []
    for r in report.rows:
        colour = colours.setdefault(r.session, _PALETTE[len(colours) % len(_PALETTE)])
        kind = "unexpected" if not r.expected else ("expected-miss" if r.cause else "prefix-hit")
        hit = "-" if r.error else f"{r.hit_rate:.0%}"
        out.append(
            f'<div class="request {kind}" data-index="{r.index}" tabindex="0">'
            f'<span class="idx">{r.index}</span>'
            f'<span class="session" style="--session:{colour}" title="{_e(r.session)}">{_e(r.session)}</span>'
            f'{bar_svg(r, longest)}<span class="rate">{hit}</span>{_cause_badge(r)}</div>')
    return "\n".join(out)


def _causes(report: CacheReport) -> str:
    top = report.top_causes()
    if not top:
        return '<p class="none">no unexpected miss</p>'
    most = max(c.tokens for c in top) or 1
    items = []
    for c in top:
        items.append(f'<li><span class="name">{_e(c.cause)}</span><span class="meter">'
                     f'<span style="width:{100 * c.tokens / most:.1f}%"></span></span>'
                     f'<span class="what">{c.requests} request{"s" * (c.requests != 1)}, '
                     f'{c.tokens:,} tokens not cached</span></li>')
    return f'<ol class="causes">{"".join(items)}</ol>'


def _cost(report: CacheReport) -> str:
    without = report.cost_without or 1.0
    saved = report.cost_without - report.cost_with
    if report.cost_without:
        verb = f"saves {saved / report.cost_without:.0%}" if saved >= 0 else \
            f"costs {-saved / report.cost_without:.0%} more"
    else:
        verb = "nothing to cache"
    label = "prefill computed" if report.source == "verify" else "input cost"
    return (f'<div class="value">{_e(amount(report.cost_with, report.cost_unit))}</div>'
            f'<div class="sub">{label} with caching vs {_e(amount(report.cost_without, report.cost_unit))} '
            f'without: caching {verb}</div>'
            f'<div class="pair"><span class="with" style="width:{min(100, 100 * report.cost_with / without):.1f}%">'
            f'</span></div><div class="pair"><span class="without" style="width:100%"></span></div>')


def _legend(report: CacheReport) -> str:
    cached, written, uncached = report.legend
    parts = [f'<span><i class="cached"></i>{_e(cached)}</span>']
    if any(r.written for r in report.rows):  # a prefix cache (verify) or OpenAI writes nothing separately
        parts.append(f'<span><i class="written"></i>{_e(written)}</span>')
    parts.append(f'<span><i class="uncached"></i>{_e(uncached)}</span>')
    parts.append('<span><i class="oracle"></i>oracle (best possible)</span>')
    return "".join(parts)


def _asset(name: str) -> str:
    return resources.files("promptcache.report").joinpath(name).read_text(encoding="utf-8")


def render_html(report: CacheReport) -> str:
    """The whole page (UTF-8 text). Everything is inline: the page loads nothing."""
    state = "incomplete" if report.skipped else "good" if report.good else "bad"
    mark = {"good": "\u2714", "bad": "\u2718", "incomplete": "\u26a0"}[state]
    skipped = "".join(f"<li>{_e(m)}</li>" for m in report.skipped)
    data = json.dumps([r.to_dict() for r in report.rows], allow_nan=False).replace("</", "<\\/")
    unexpected = sum(1 for r in report.rows if not r.expected)
    notes = "".join(f"<li>{_e(n)}</li>" for n in report.notes)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>promptcache report: {_e(os.path.basename(report.trace))}</title>
<style>{_asset("page.css")}</style></head>
<body class="{state}" data-source="{report.source}" data-unit="{_e(report.cost_unit)}">
<header><div class="verdict">{mark} {_e(report.headline)}</div>
<h1>{_e(os.path.basename(report.trace))}</h1><p class="title">{_e(report.title)} &middot;
{len(report.rows)} requests &middot; {report.prompt_tokens:,} prompt tokens</p>
{f'<ul class="skipped">{skipped}</ul>' if skipped else ''}</header>
<section class="kpis">
<div class="kpi"><h2>hit rate</h2><div class="value">{_rate(report.hit_rate)}</div>
<div class="sub">of prompt tokens read from the cache; the oracle's best: {_rate(report.oracle_rate)}</div>
<div class="gauge"><span class="got" style="width:{100 * (report.hit_rate or 0):.1f}%"></span>
<span class="best" style="left:{100 * (report.oracle_rate or 0):.1f}%"></span></div></div>
<div class="kpi"><h2>cost</h2>{_cost(report)}</div>
<div class="kpi"><h2>top causes <small>({unexpected} unexpected miss{"es" * (unexpected != 1)})</small></h2>
{_causes(report)}</div>
</section>
<main><section class="chart"><div class="legend">{_legend(report)}</div>
<div class="head"><span>#</span><span>session</span><span>prompt tokens (click a bar)</span><span>hit</span>
<span>miss cause</span></div>
<div id="requests">
{_rows(report)}
</div></section>
<aside id="detail"><p class="placeholder">Click a request to see where its prompt first diverges from the
earlier request that shares the longest prefix.</p></aside></main>
<footer><ul class="notes">{notes}</ul><p>promptcache report &middot; {_e(_SOURCES[report.source])}</p></footer>
<script type="application/json" id="report-data">{data}</script>
<script>{_asset("page.js")}</script>
</body></html>
"""


def write_html(report: CacheReport, path: str | os.PathLike[str]) -> None:
    """Write :func:`render_html` of ``report`` to ``path`` (UTF-8).

    Raises:
        OSError: the file cannot be written.
    """
    with open(path, "w", encoding="utf-8") as out:
        out.write(render_html(report))
