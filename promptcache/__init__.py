"""promptcache: keep LLM prompt caches hot.

The public SDK names are re-exported here; everything else lives in clearly
named modules (``promptcache.lint``, ``promptcache.simulate``, ...).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
