"""The HTML cache report: ``promptcache report``, ``verify --html``, ``simulate --html``.

:func:`~promptcache.report.model.from_simulation` / :func:`~promptcache.report.model.from_verify` take the
numbers a command already computed; :func:`~promptcache.report.html.write_html` writes one self-contained page.
"""

from promptcache.report.html import render_html, write_html
from promptcache.report.model import CacheReport, Row, from_simulation, from_verify

__all__ = ["CacheReport", "Row", "from_simulation", "from_verify", "render_html", "write_html"]
