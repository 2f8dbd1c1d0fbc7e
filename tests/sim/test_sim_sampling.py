"""The simulated agent's sampled mode (readbench.sim.sampling, GitHub issue 25 item 4): with
``temperature > 0`` every call draws afresh (reproducibly from ``GenerateConfig.seed``, from
``os.urandom`` without one); with temperature unset or 0 nothing changes."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from inspect_ai.util import Store
from scipy.stats import binomtest
from sim_harness import Workspace, numbered_file, oracle, run_session, tool_infos

from readbench.sim import sampling
from readbench.sim.draws import sample_seed
from readbench.sim.memory import SIM_KEY
from readbench.sim.oracle import ORACLE_KEY
from readbench.sim.provider import choose_profile
from readbench.sim.sampling import call_nonce, reset_streams

BIG = numbered_file(5000)
FIX = oracle(search_key="row 04500", old_text="row 04500 value", new_text="row 04500 FIXED", target_line=4500)
SAMPLED = GenerateConfig(temperature=0.7, seed=2501)


def _run(config, model="sim-mixed", max_calls=80):
    return run_session(model, FIX, Workspace({"big.py": BIG}, "B", fixed="row 04500 FIXED"), config=config,
                       max_calls=max_calls)


def _dumps(trace):
    return [o.model_dump_json() for o in trace.outputs]


def _nonce(seed, n):
    return hashlib.sha256(f"sampled|{seed}|{n}".encode()).hexdigest()[:16]


def test_temperature_unset_or_zero_keeps_the_seeded_trajectory():
    plain = _run(None)
    for config in (GenerateConfig(), GenerateConfig(temperature=0), GenerateConfig(temperature=0.0, seed=9),
                   GenerateConfig(seed=9)):
        assert _dumps(_run(config)) == _dumps(plain), config


def test_a_seeded_sampled_run_repeats_and_the_next_run_of_the_same_sample_draws_afresh():
    reset_streams()
    first = _run(SAMPLED)
    second = _run(SAMPLED)  # the seed's stream goes on: another sample of the same task and epoch
    reset_streams()
    again = _run(SAMPLED)
    assert _dumps(again) == _dumps(first)
    assert _dumps(second) != _dumps(first)
    assert first.outputs[0].message.text != second.outputs[0].message.text  # prose drawn from the call's nonce
    # ids still derive from the sample seed (task, epoch, the profile drawn)
    for trace in (first, second):
        seed = sample_seed("t1", 1, trace.store.get(SIM_KEY)["profile"])
        assert trace.outputs[0].message.tool_calls[0].id == f"sim{seed[:8]}c001"
    # a mixture's profile is drawn with the sample's first nonce: call n of the stream is sha256("sampled|2501|n")
    n = len(first.outputs)
    assert first.store.get(SIM_KEY)["profile"] == choose_profile("sim-mixed", "t1", 1, _nonce(2501, 0))
    assert second.store.get(SIM_KEY)["profile"] == choose_profile("sim-mixed", "t1", 1, _nonce(2501, n))


def test_a_sampled_decision_follows_the_profiles_probability_per_call():
    """sim-pager's first call is a blind read that B blocks (5,000 lines); its second call complies
    (a ranged read) with p_comply_block = 0.7, else it repeats the blind read. Seeded, every run of
    the sample takes the same branch; sampled, the share of 400 runs is binomial(400, 0.7)."""
    def complies(config):
        trace = _run(config, "sim-pager", max_calls=2)
        assert trace.tool_calls()[0] == ("read", {"path": "big.py"})
        return "limit" in trace.tool_calls()[1][1]

    assert {complies(None) for _ in range(20)} == {complies(None)}
    reset_streams()
    k = sum(complies(GenerateConfig(temperature=1.0, seed=7)) for _ in range(400))
    assert k == 275  # seed 7, a fresh stream (68.75 %)
    assert binomtest(k, 400, 0.7).pvalue > 0.5


def test_without_a_seed_each_call_takes_its_nonce_from_os_urandom(monkeypatch):
    assert call_nonce(None) is None and call_nonce(GenerateConfig(temperature=0, seed=3)) is None
    assert call_nonce(GenerateConfig(temperature=1.0)) != call_nonce(GenerateConfig(temperature=1.0))
    drawn = []

    def urandom(n):
        drawn.append(n)
        return bytes([len(drawn)] * n)

    monkeypatch.setattr(sampling.os, "urandom", urandom)
    assert [call_nonce(GenerateConfig(temperature=0.2)) for _ in range(2)] == ["01" * 8, "02" * 8]
    assert call_nonce(GenerateConfig(temperature=0.2, seed=1)) == _nonce(1, 0)  # seeded: no urandom
    assert drawn == [8, 8]


def test_the_temperature_reaches_the_provider_through_inspects_model():
    """inspect's Model.generate merges the model's GenerateConfig into each call's config."""
    from inspect_ai.util._store import init_subtask_store

    outputs = {}
    for name, config in (("greedy", GenerateConfig(temperature=0, seed=4)), ("sampled", GenerateConfig(temperature=1, seed=4))):
        reset_streams()
        st = Store()
        st.set(ORACLE_KEY, FIX)
        init_subtask_store(st)
        model = get_model("readbench/sim-mixed", config=config, memoize=False)
        outputs[name] = asyncio.run(model.generate([ChatMessageUser(content="Fix it.")], tool_infos("B")))
        outputs[name + " profile"] = st.get(SIM_KEY)["profile"]
    assert outputs["greedy profile"] == choose_profile("sim-mixed", "t1", 1)
    assert outputs["sampled profile"] == choose_profile("sim-mixed", "t1", 1, _nonce(4, 0))
    assert outputs["greedy"].message.text != outputs["sampled"].message.text


@pytest.fixture(autouse=True)
def _fresh_streams():
    reset_streams()
    yield
    reset_streams()
