"""Why a request misses the cache: the one miss-cause classifier every tool shares.

- ``rendering.py``: a request body rendered with ChatML, every piece attributed to a layer and a block path;
- ``prefix_index.py``: the earlier request sharing the longest token prefix;
- ``causes.py``: the cause classes, the :class:`Divergence` record, :func:`identical_after`;
- ``classifier.py``: the pairwise rules (one rendering against one earlier rendering);
- ``guard.py``: :class:`PrefixGuard` (which earlier request, sessions, truncations), :func:`classify_requests`.

``promptcache diff`` (:mod:`promptcache.simulate.diff`) lives with the simulators: it names runtime causes
(``no_breakpoint``, ``below_minimum``, ``ttl_expired``) that only a simulation knows.
"""

from __future__ import annotations

from promptcache.misses.causes import EXPECTED_CAUSES, RUNTIME_CAUSES, Divergence, MissCause
from promptcache.misses.guard import PrefixGuard, classify_requests, compare_bodies

__all__ = ["EXPECTED_CAUSES", "RUNTIME_CAUSES", "Divergence", "MissCause", "PrefixGuard", "classify_requests",
           "compare_bodies"]
