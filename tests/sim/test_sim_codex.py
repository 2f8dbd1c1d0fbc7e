"""The simulated agent answers a request offering Codex CLI's tools through them (readbench.sim.dialect_codex)."""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.tool import ToolInfo, ToolParams
from inspect_ai.util import Store
from sim_harness import oracle

from readbench.sim.memory import SIM_KEY
from readbench.sim.oracle import ORACLE_KEY
from readbench.sim.provider import generate_in_store

CODEX_TOOLS = [ToolInfo(name=n, description=f"codex {n}", parameters=ToolParams())
               for n in ("exec_command", "write_stdin", "view_image", "update_goal")]


def test_the_sim_answers_a_codex_request_with_a_shell_call():
    st = Store()
    st.set(ORACLE_KEY, oracle(search_key="row 04500", old_text="row 04500 value", new_text="row 04500 FIXED",
                              target_line=4500))
    msgs = [ChatMessageSystem(content="You are Codex"), ChatMessageUser(content="<environment_context>x</environment_context>"),
            ChatMessageUser(content="Fix big.py")]
    out = generate_in_store(st, "sim-pager", {"calls_per_prompt": [0, 0]}, msgs, CODEX_TOOLS)
    (call,) = out.message.tool_calls
    assert call.function == "exec_command" and set(call.arguments) == {"cmd"}
    memory = st.get(SIM_KEY)
    (last,) = memory["last_calls"]  # the sim remembers its action in its own vocabulary
    if last["function"] == "read":
        assert call.arguments["cmd"].startswith("nl -ba big.py")
    else:
        assert (last["function"], call.arguments["cmd"]) == ("bash", "grep -n -F -e 'row 04500' -- big.py")
    assert out.usage is not None and out.usage.input_tokens > 0
