"""Fork points from a recorded session and `readbench plan --design forked --sessions` (GitHub
issue 25 item 5), on a hand-built pi session whose fork points are worked out by hand.

The session (8 calls): call 0 reads big.txt blind (5,000 lines: stock returns the first 2,000
lines, capped; B refuses it), call 1 reads small.py (100 lines: every preset returns it whole),
call 2 reads small.py again (B+dedup: a stub pointing at call 1's copy, still in view), calls 3-6
read four other 100-line files, call 7 answers. A tool result enters the request of the call
after the reply that asked for it, so B leaves stock at call 1 (c0's result) and B+dedup leaves B
at call 3 (c2's result). obs-mask-5 keeps the last 5 tool results: call k's request holds k of
them, so its first change is call 6 (c0's result masked); pi-dcp protects the last 8 turns and
changes nothing in 8 calls.
"""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from readbench.analysis import _format as F
from readbench.cli import main
from readbench.read import get_variant
from readbench.read._session import ReadSession

BIG = "".join(f"x{k:05d}\n" for k in range(1, 5001)).encode()
SMALL = "".join(f"def f{k}():\n    return {k}\n" for k in range(50))
MATRIX = """
name: p
models: [readbench/sim-mixed]
variants: [stock, B, B+dedup]
dcp: ["off"]
arms:
  - [stock, obs-mask-5]
cache_models: [anthropic-5m]
"""


def _other(j: int) -> str:
    return "".join(f"def g{j}_{k}():\n    return {k}\n" for k in range(50))


def _session(pi_session, out):
    stock = get_variant("stock").read(BIG, "/p/big.txt", None, None, call_id=None, session=ReadSession(),
                                      visible_call_ids=None).text
    b = pi_session().user("Read big.txt and the Python files, then tell me what they hold.")
    prompt = 900
    reads = [("big.txt", stock), ("small.py", SMALL), ("small.py", SMALL)] + [(f"m{j}.py", _other(j)) for j in range(4)]
    for k, (path, text) in enumerate(reads):
        b.assistant("", 10.0 * k, (0, prompt - 900 if k else 0, 900, 10), calls=((f"c{k}", "read", {"path": path}),))
        b.result(f"c{k}", text)
        prompt += 900
    b.assistant("Done: big.txt counts, the modules define functions.", 70.0, (0, prompt - 900, 900, 20))
    return b.write(out)


def test_fork_points_and_the_forked_plan_from_a_recorded_session(tmp_path, pi_session, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = _session(pi_session, tmp_path / "s.jsonl")
    r = CliRunner().invoke(main, ["replay", str(f), "--audit", "--presets", "stock,B,B+dedup", "--dcp",
                                  "pi-dcp,obs-mask-5", "--fork-points", "--out", "rep"])
    assert r.exit_code == 0, r.output
    fp = pd.read_parquet(tmp_path / "rep/fork_points.parquet")
    got = {(k, t, a): (None if pd.isna(v) else int(v))
           for k, t, a, v in fp[["kind", "trunk", "arm", "first_call"]].itertuples(index=False)}
    assert got == {
        ("read", "stock", "B"): 1, ("read", "B", "stock"): 1, ("read", "stock", "B+dedup"): 1,
        ("read", "B+dedup", "stock"): 1, ("read", "B", "B+dedup"): 3, ("read", "B+dedup", "B"): 3,
        ("dcp", "off", "off"): None, ("dcp", "off", "pi-dcp"): None, ("dcp", "off", "obs-mask-5"): 6}
    assert set(fp["calls"]) == {8}
    report = (tmp_path / "rep/report.md").read_text()
    # 6 read pairs, all diverging; pi-dcp and obs-mask-5 against off: only obs-mask-5 changes a request
    assert ("## Fork points\n\n`fork_points.parquet` (9 rows, 1 session file(s)): per recorded session, each ordered "
            "pair of replayed read presets (`kind` read: `trunk`, `arm`) and each DCP configuration against off "
            "(`kind` dcp), the 0-based index of the first model call whose request the arm would change "
            "(`first_call`; empty when no request changes) and the session's number of calls (`calls`). Read-preset "
            "pairs that diverge: 6 of 6; DCP configurations that change a request: 1 of 2. `readbench plan --design "
            "forked --sessions <this directory> --matrix FILE` reads it to estimate what a forked run of that matrix "
            "saves.\n") in report, report[report.find("Fork points") - 200:]

    (tmp_path / "m.yaml").write_text(MATRIX)
    r = CliRunner().invoke(main, ["plan", "--design", "forked", "--sessions", "rep", "--matrix", "m.yaml"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    # two schema groups: {stock x off, stock x obs-mask-5} under stock x off, {B, B+dedup} under B x off.
    # Independent: 4 arms x 8 calls. Forked: the two trunks' 8 calls each, plus what each fork makes after
    # its fork point: stock x obs-mask-5 8 - 6, B+dedup 8 - 3 (the trunk arms' forks replay theirs whole).
    assert lines[1].startswith("  recorded sessions (1 session): model calls independent 32.0, forked 23.0 "
                               f"({F.pct(1 - 23 / 32)} saved); tokens independent "), r.output
    calls = pd.read_parquet(tmp_path / "rep/calls.parquet")
    c = calls[(calls["mode"] == "in_sample") & (calls["cache_model"] == "anthropic-5m")].set_index("call")["sim_cost_usd"]
    assert list(c.index) == list(range(8))
    independent, forked = 4 * c.sum(), 2 * c.sum() + c[6:].sum() + c[3:].sum()
    assert lines[2] == (f"  recorded sessions / anthropic-5m: independent {F.usd(independent)}, forked {F.usd(forked)} "
                        f"({F.pct(1 - forked / independent)} saved)"), r.output
    arms = {x.split(":")[0].strip(): x.split(":", 1)[1].strip() for x in lines[4:8]}
    assert arms == {
        "B × off": "a trunk (paid in full in both designs)",
        "B+dedup × off": "diverged in 100.0% of 1 sessions, median fork point 37.5% of the calls; calls not spent 37.5%",
        "stock × obs-mask-5": "diverged in 100.0% of 1 sessions, median fork point 75.0% of the calls; "
                              "calls not spent 75.0%",
        "stock × off": "a trunk (paid in full in both designs)"}
    assert "Trunks (one per schema group, each paid whole): stock × off, B × off." in r.output
    # pi's arms form one more group under the first pi arm (readbench.run.forked.pi_groups; pi expresses
    # stock and B: three pi arms, 8 calls each). Independent: 7 x 8 = 56. Forked: the loop's 23, the pi
    # trunk's 8, B x pi from its fork at call 1 (8 - 1, the read pair stock -> B), stock x obs-mask-5 x pi 8 - 6
    (tmp_path / "m2.yaml").write_text(MATRIX.replace(
        "variants:", "agents: [readbench, {name: pi, variants: [stock, B]}]\nvariants:", 1))
    r = CliRunner().invoke(main, ["plan", "--design", "forked", "--sessions", "rep", "--matrix", "m2.yaml"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[1].startswith("  recorded sessions (1 session): model calls independent 56.0, "
                                               "forked 40.0 "), r.output
    lines = r.output.splitlines()
    assert "  stock × off × pi: a trunk (paid in full in both designs)" in lines
    assert ("  B × off × pi: diverged in 100.0% of 1 sessions, median fork point 12.5% of the calls; calls not "
            "spent 12.5%") in lines
    assert ("  stock × obs-mask-5 × pi: diverged in 100.0% of 1 sessions, median fork point 75.0% of the calls; "
            "calls not spent 75.0%") in lines
    assert "Trunks (one per schema group, each paid whole): stock × off, B × off, stock × off × pi." in r.output


def test_plan_from_sessions_names_what_is_missing(tmp_path, pi_session, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = _session(pi_session, tmp_path / "s.jsonl")
    (tmp_path / "m.yaml").write_text(MATRIX)
    for out, dcp, missing in (("rep", [], "the DCP configuration 'obs-mask-5' (needed: 'obs-mask-5' against 'off'): "
                                          "replay the sessions with --dcp naming it, and --fork-points"),
                              ("rep1", ["--dcp", "obs-mask-5"], "the read preset 'B+dedup' (needed: 'B+dedup' against "
                                                                "'B'): replay the sessions with --audit --presets naming it")):
        r = CliRunner().invoke(main, ["replay", str(f), "--audit", "--presets", "stock,B", *dcp, "--fork-points",
                                      "--out", out])
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(main, ["plan", "--design", "forked", "--sessions", out, "--matrix", "m.yaml"])
        assert r.exit_code == 2 and f"the replay has no fork points for {missing}" in " ".join(r.output.split()), r.output
    # the preset missing from the replay is named, whichever of the pair it is (a trial's matrix had the
    # unreplayed preset first in its group, its trunk, and the error blamed the replayed one)
    (tmp_path / "m3.yaml").write_text(MATRIX.replace("[stock, B, B+dedup]", "[stock, B+dedup, B]"))
    r = CliRunner().invoke(main, ["plan", "--design", "forked", "--sessions", "rep1", "--matrix", "m3.yaml"])
    assert r.exit_code == 2 and "no fork points for the read preset 'B+dedup' (needed: 'B' against 'B+dedup')" in \
        " ".join(r.output.split()), r.output
    r = CliRunner().invoke(main, ["plan", "--sessions", "rep", "--matrix", "m.yaml"])
    assert r.exit_code == 2 and "--design forked missing (give --design forked and --matrix FILE)" in " ".join(r.output.split())
    r = CliRunner().invoke(main, ["plan", "--design", "forked", "--sessions", "rep"])
    assert r.exit_code == 2 and "--matrix FILE missing" in " ".join(r.output.split()), r.output
    r = CliRunner().invoke(main, ["plan", "--design", "forked", "--from", "rep", "--matrix", "m.yaml"])
    assert r.exit_code == 2 and "--matrix is read only with --sessions REPLAY_DIR" in " ".join(r.output.split())
    r = CliRunner().invoke(main, ["replay", str(f), "--audit", "--presets", "stock,B", "--out", "rep3"])
    assert r.exit_code == 0 and "Fork points" not in (tmp_path / "rep3/report.md").read_text()  # no --fork-points
    r = CliRunner().invoke(main, ["replay", str(f), "--fork-points", "--out", "rep2"])
    assert r.exit_code == 2 and "--fork-points needs --audit" in r.output
