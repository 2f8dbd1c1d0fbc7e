"""A pi trunk's shadow of its other arms (readbench.agents.pi_shadow): the fork point dicts it gives
for read presets and DCP configurations, on hand-made relayed histories and a fake sandbox."""

from __future__ import annotations

import asyncio

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from readbench.agents.pi_shadow import PiShadow
from readbench.dcp import project
from readbench.fork.shadow import arm_key
from readbench.read import get_variant
from readbench.read._session import ReadSession

BIG = "".join(f"line {i}\n" for i in range(1, 2604)).encode()  # over B's 2000-line cap
SMALL = b"a\nb\n"


class FakeSandbox:
    def __init__(self, files):
        self.files = files

    async def read_file(self, path, text=True):
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]


def _history(*replies):
    """system, user, then per reply an assistant with its tool calls and their results."""
    out = [ChatMessageSystem(content="sys"), ChatMessageUser(content="task")]
    for r, calls in enumerate(replies):
        tcs = [ToolCall(id=f"c{r}{i}", function=f, arguments=a) for i, (f, a) in enumerate(calls)]
        out.append(ChatMessageAssistant(content=f"reply {r}", tool_calls=tcs))
        out += [ChatMessageTool(content=f"result {r}{i}", tool_call_id=t.id) for i, t in enumerate(tcs)]
    return out


def _observe(shadow, sb, histories, trunk_dcp="off"):
    async def go():
        for call, h in enumerate(histories):
            await shadow.observe(call, h, project(h, trunk_dcp).messages, None, sb)
    asyncio.run(go())


def test_b_forks_at_the_call_whose_request_holds_the_read_it_refuses():
    sb = FakeSandbox({"/w/big.py": BIG, "/w/small.py": SMALL})
    replies = [[("read", {"path": "small.py"})], [("bash", {"command": "ls"})], [("read", {"path": "big.py"})],
               [("read", {"path": "/w/missing.py"})]]
    histories = [_history(*replies[:k]) for k in range(5)]
    shadow = PiShadow(("stock", "off"), [("stock", "off"), ("B", "off")], "/w")
    _observe(shadow, sb, histories)
    refusal = get_variant("B").read(BIG, "big.py", None, None, call_id="c20", session=ReadSession(),
                                    visible_call_ids=None).text
    assert refusal.startswith("File has 2603 lines")
    assert shadow.finish(5) == {
        arm_key("stock", "off"): {"call": None, "kind": "never", "reason": "not diverged within the trunk's 5 calls",
                                  "results": {}, "dcp_state": None},
        # the reply to call 2 read big.py (its result is in request 3): numbered as the loop's result forks
        arm_key("B", "off"): {"call": 2, "kind": "result", "reason": "its read results differ",
                              "results": {"c20": [refusal, True]}, "dcp_state": {"version": 1, "decisions": []}},
    }


def test_a_b_trunks_stock_arm_gets_pis_own_read_where_the_trunk_refused():
    sb = FakeSandbox({"/w/big.py": BIG})
    histories = [_history(*[[("read", {"path": "big.py"})]][:k]) for k in range(2)]
    shadow = PiShadow(("B", "off"), [("B", "off"), ("stock", "off")], "/w")
    _observe(shadow, sb, histories)
    stock = get_variant("stock").read(BIG, "big.py", None, None, call_id="c00", session=ReadSession(),
                                      visible_call_ids=None).text
    assert shadow.finish(2)[arm_key("stock", "off")]["results"] == {"c00": [stock, False]}
    assert stock.endswith("line 2000\n\n[Showing lines 1-2000 of 2604. Use offset=2001 to continue.]")  # pi counts the last newline


def test_a_read_beside_a_mutating_tool_forks_one_call_earlier():
    sb = FakeSandbox({"/w/big.py": BIG})
    replies = [[("bash", {"command": "ls"})], [("edit", {"path": "big.py"}), ("read", {"path": "big.py"})]]
    shadow = PiShadow(("stock", "off"), [("B", "off")], "/w")
    _observe(shadow, sb, [_history(*replies[:k]) for k in range(3)])
    assert shadow.finish(3)[arm_key("B", "off")] == {
        "call": 1, "kind": "request", "results": {}, "dcp_state": None,
        "reason": "a read in a reply that also changed files: forked one call earlier (conservative)"}



def test_a_read_of_a_file_the_same_reply_removed_still_forks_one_call_earlier():
    # `rm big.log` beside the read: the bytes after the reply cannot say what B would have refused,
    # so B forks before that reply whatever they give (here: the file is gone, the read unrecomputable)
    sb = FakeSandbox({})
    replies = [[("bash", {"command": "ls"})], [("read", {"path": "big.log"}), ("bash", {"command": "rm big.log"})]]
    shadow = PiShadow(("stock", "off"), [("B", "off")], "/w")
    _observe(shadow, sb, [_history(*replies[:k]) for k in range(3)])
    assert shadow.finish(3)[arm_key("B", "off")] == {
        "call": 1, "kind": "request", "results": {}, "dcp_state": None,
        "reason": "a read in a reply that also changed files: forked one call earlier (conservative)"}

def test_a_dcp_arm_forks_at_its_first_projection_that_differs():
    sb = FakeSandbox({})
    replies = [[("bash", {"command": f"echo {i}"})] for i in range(7)]
    shadow = PiShadow(("stock", "off"), [("stock", "off"), ("stock", "obs-mask-5")], "/w")
    _observe(shadow, sb, [_history(*replies[:k]) for k in range(8)])
    got = shadow.finish(8)
    assert got[arm_key("stock", "obs-mask-5")] == {"call": 6, "kind": "request", "reason": "its DCP projection differs",
                                                   "results": {}, "dcp_state": {"version": 1, "decisions": []}}
    assert got[arm_key("stock", "off")]["kind"] == "never"


def test_the_reads_answered_in_the_request_past_the_turn_limit_are_shadowed(monkeypatch):
    # max_turns=2: the trunk's third request (holding call 1's read of big.py, which B refuses) is
    # answered by the relay without the model; B's results differ only there, so B forks at call 1
    # (kind result: its reply shared, B's result after it), not "never" (which would give B the trunk's sample, stock's read of big.py in its read metrics)
    from inspect_ai.model import GenerateConfig, ModelOutput, get_model

    from readbench.agents import relay as relay_module

    sb = FakeSandbox({"/w/big.py": BIG, "/w/small.py": SMALL})
    monkeypatch.setattr(relay_module, "sandbox", lambda: sb)
    relay = relay_module.Relay("off", "/w", 200_000, max_turns=2)
    relay.shadow = PiShadow(("stock", "off"), [("stock", "off"), ("B", "off"), ("stock", "obs-mask-5")], "/w")
    replies = [[("read", {"path": "small.py"})], [("read", {"path": "big.py"})]]
    model = get_model("mockllm/model")

    async def go():
        for k in range(3):
            sent = await relay.filter(model, _history(*replies[:k]), [], None, GenerateConfig())
            if not isinstance(sent, ModelOutput):
                await relay.response(model, ModelOutput.from_content("mockllm/model", "ok"), sent)
        # pi's next prompt (a follow-up) meets the limit too: B's fork point stays
        follow_up = [*_history(*replies), ChatMessageAssistant(content=""), ChatMessageUser(content="and then?")]
        assert isinstance(await relay.filter(model, follow_up, [], None, GenerateConfig()), ModelOutput)
        return sent

    last = asyncio.run(go())
    assert isinstance(last, ModelOutput) and relay.turn_limited and len(relay.calls) == 2
    refusal = get_variant("B").read(BIG, "big.py", None, None, call_id="c10", session=ReadSession(),
                                    visible_call_ids=None).text
    got = relay.shadow.finish(2)
    assert got[arm_key("B", "off")] == {"call": 1, "kind": "result", "reason": "its read results differ",
                                        "results": {"c10": [refusal, True]}, "dcp_state": {"version": 1, "decisions": []}}
    assert got[arm_key("stock", "obs-mask-5")]["kind"] == "never"  # its projection there changes no call
