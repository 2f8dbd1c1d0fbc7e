"""The cyclic collector waits for the end of a session's replay (readbench.replay.run.
_no_collections_in_session): no pass inside it, the collector enabled again after it, and a
caller's disabled collector left disabled."""

from __future__ import annotations

import gc

from readbench.replay.run import ReplayOptions, _replay_session
from readbench.sessions import load_file
from readbench.sessions.synth import write_pi_session


def test_no_collection_inside_a_session_and_the_collector_restored(tmp_path):
    (session,) = load_file(write_pi_session(tmp_path / "s.jsonl", seed=3, calls=30))
    options = ReplayOptions(cache=("anthropic-5m",), dcp=("off", "pi-dcp"), dcp_cache=("anthropic-5m",))
    passes: list[tuple[str, int]] = []
    inside = [False]

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            passes.append(("inside" if inside[0] else "outside", info["generation"]))

    old = gc.get_threshold()
    gc.callbacks.append(seen)
    try:
        gc.set_threshold(1, 1, 1)  # a pass at every allocation while the collector is enabled
        assert gc.isenabled()
        real = _replay_session.__globals__["_replay_one"]

        def marked(*args):
            inside[0] = True
            try:
                return real(*args)
            finally:
                inside[0] = False

        _replay_session.__globals__["_replay_one"] = marked
        try:
            res = _replay_session(session, options)
            assert gc.isenabled()
            gc.disable()
            _replay_session(session, options)
            assert not gc.isenabled()
            gc.enable()
        finally:
            _replay_session.__globals__["_replay_one"] = real
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*old)
    assert len(res.tables["dcp"]) == 2
    assert [p for p in passes if p[0] == "inside"] == []
    assert ("outside", 0) in passes  # the youngest-generation pass after the session
