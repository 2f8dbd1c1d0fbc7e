"""Fixtures of the replay tests (the builders live in replay_sessions.py)."""

from __future__ import annotations

import pytest
from replay_sessions import PiSessionFile


@pytest.fixture
def pi_session() -> type[PiSessionFile]:
    return PiSessionFile
