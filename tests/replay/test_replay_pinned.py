"""Every output of a full replay (`--dcp all --cache <5 cache models> --audit --gate-sweep`) is
pinned to what the straightforward implementation gave (issue 26: the replay's speed-ups must
leave the tables byte-identical).

Three synthetic sessions (pi with a compaction and restarts, Claude Code, pi re-reading four
files under a 2-minute cache TTL) are replayed in-process (`readbench.replay.run._replay_session`); each
output table and the per-session JSON object is serialised canonically (sorted keys, floats by
their exact `repr`, so a different summation order shows) and its SHA-256 compared with the
digest recorded on main before the optimisations (64a4306; calls, sessions and the JSON
re-recorded on main 065c108, whose bill check changed them; the read counterfactual's on main
with issue 29's own-harness counterfactual; calls, sessions and the JSON re-recorded for issue 22's
`opening` call kind, which changes the call_kind column and the break rates' keys; sessions and the JSON
re-recorded on 2026-12-08 for the own out-of-sample interval centred on the prediction, which changes
only the two interval fields; then again for the units in two field names, `break_cost_usd_by_kind` and
`break_loss_tokens`, whose values are unchanged: renamed back, the digests are the previous ones; the JSON
once more for the wording of the what-if note, "is of the anthropic cache family, not openai" for "is not a
openai model": with the old wording put back, the previous digests). Spot values (row counts, one
cost to the last digit) make a failure readable.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest

from readbench.dcp import list_configs
from readbench.replay.run import ReplayOptions, _replay_session
from readbench.sessions import load_file
from readbench.sessions.synth import write_claude_session, write_pi_session

CACHES = ("anthropic-5m", "anthropic-1h", "openai", "deepseek", "gemini-implicit")


def _canonical(v: Any) -> Any:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    if isinstance(v, dict):
        return {str(k): _canonical(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_canonical(x) for x in v]
    if v is None or isinstance(v, (bool, int, str)):
        return v
    return repr(v)


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(_canonical(obj), sort_keys=True).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    d = tmp_path_factory.mktemp("pinned")
    files = {
        "pi": write_pi_session(d / "pi.jsonl", seed=11, calls=70, prompts=6, compact_at=30_000, p_restart=0.3),
        "claude": write_claude_session(d / "claude.jsonl", seed=12, calls=60, prompts=5),
        "pi-rereads": write_pi_session(d / "rereads.jsonl", seed=13, calls=50, prompts=4, files=4, ttl_seconds=120.0),
    }
    options = ReplayOptions(cache=CACHES, dcp=tuple(c.name for c in list_configs()), dcp_cache=CACHES,
                            gate_sweep=True, audit=True)
    out = {}
    for name, f in files.items():
        (session,) = load_file(f)
        res = _replay_session(session, options)
        for table in res.tables.values():  # the temporary path is not part of the result
            for row in table:
                if "file" in row:
                    row["file"] = "-"
        res.json["file"] = "-"
        out[name] = res
    return out


#: session -> table -> digest, recorded on main at 065c108 (main without issue 26's changes); the read
#: counterfactual's tables (read_arms, read_arm_reads) and the Claude Code JSON re-recorded on main with issue
#: 29's own-harness counterfactual merged and without issue 26's changes, which then reproduced them all.
PINNED: dict[str, dict[str, str]] = {
    "pi": {
        "audit": "ae3247b4311f9124",
        "audit_reads": "07ab830a37dc4f09",
        "calls": "2b84e4760ef8b20f",
        "dcp": "5684b4e80591f86d",
        "dcp_calls": "49ed0294e3bb3847",
        "gate_candidates": "4f53cda18c2baa0c",
        "read_arm_reads": "2e58b854da3b65c2",
        "read_arms": "e8843670c133f7ae",
        "sessions": "1ba6388dd7cb1b9a",
        "json": "524306588b43d43a",
    },
    "claude": {
        "audit": "9a45fa10e54aacf1",
        "audit_reads": "409d15152629faac",
        "calls": "20ea616488000c08",
        "dcp": "c2ff0e756e0fd4c2",
        "dcp_calls": "fce7dce48f35b66d",
        "gate_candidates": "41035f8c774d94b2",
        "read_arm_reads": "fe642bc7b40f1ce5",
        "read_arms": "583fb7ece5f25bc5",
        "sessions": "67bd8dad44d02706",
        "json": "6dec9dca0efcf995",
    },
    "pi-rereads": {
        "audit": "4f4b0016cc9ab2f8",
        "audit_reads": "9f98c31f37480ae5",
        "calls": "d47fc705f2c379f3",
        "dcp": "a311ae218d3d90f7",
        "dcp_calls": "fd116bc6ea1363b1",
        "gate_candidates": "4f53cda18c2baa0c",
        "read_arm_reads": "d3d3177f6b3db6cf",
        "read_arms": "3cf334f5d65f79dd",
        "sessions": "008588c024e7caf2",
        "json": "59d7220ee8438cc5",
    },
}


def test_every_table_and_the_session_json_are_as_pinned(replayed):
    got = {name: {**{t: _digest(rows) for t, rows in sorted(res.tables.items())}, "json": _digest(res.json)}
           for name, res in replayed.items()}
    assert got == PINNED


def test_spot_values(replayed):
    res = replayed["pi"]
    assert len(res.tables["calls"]) == 70 * len(CACHES) * 3  # calls x cache models x modes
    assert len(res.tables["dcp"]) == len(list_configs()) * len(CACHES)
    assert len(res.tables["dcp_calls"]) == 70 * len(list_configs())
    off = next(r for r in res.tables["dcp"] if r["config"] == "off" and r["cache_model"] == "anthropic-5m")
    assert repr(off["sim_cost_usd"]) == "1.3354417499999998"
