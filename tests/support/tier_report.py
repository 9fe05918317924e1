"""A pytest plugin for tests/integration/test_layout.py: prints each collected test's tier markers, one line each,
so one collection run shows the whole split (``-p tests.support.tier_report``)."""

from __future__ import annotations

import pytest

TIERS = ("unit", "integration", "system", "gpu")


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        marked = [tier for tier in TIERS if item.get_closest_marker(tier) is not None]
        print(f"TIER\t{','.join(marked)}\t{item.nodeid}")  # a node id may hold spaces, never a tab
