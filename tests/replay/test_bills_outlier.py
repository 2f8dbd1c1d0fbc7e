"""A call billed for a foreign request is not unrecorded content entering the context (issue 22).

Real Codex rollouts (cli 0.77) carry token counts of requests that are not the main thread's: a
call between two ~50k-token prompts billed 12,546 tokens. The residual (billed - calibrated prompt)
then dips at that call and comes back at the next, which `infer_insertions` took for a lasting rise
of ~40k tokens: every later request was rebuilt 40k tokens too long (one 354-call session was
simulated at 2.3 x its bill). An insertion is a rise over the residual *before the dip* too.
"""

from __future__ import annotations

import json

from replay_sessions import planted_session

from readbench.cache.prices import canonical_model
from readbench.replay.bill import session_date
from readbench.replay.calibrate import content_calibration
from readbench.replay.requests import RequestSet
from readbench.sessions import load_file

FOREIGN = 20


def test_a_one_call_dip_in_the_bill_is_not_an_insertion(tmp_path, pi_session):
    path, _ = planted_session(tmp_path, pi_session)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    calls = [x for x in lines if x.get("message", {}).get("role") == "assistant"]
    # call FOREIGN is billed as a small request that shares nothing: 3,000 uncached tokens
    calls[FOREIGN]["message"]["usage"].update(input=3000, cacheRead=0, cacheWrite=0)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (s,) = load_file(path)
    models = [canonical_model(c.model) for c in s.calls]
    rs = RequestSet(s, "anthropic-legacy", models)
    cal = content_calibration(s, rs, session_date(s), range(len(s.calls)))
    assert cal.insertions == ()
