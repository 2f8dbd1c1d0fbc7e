"""A long session under pi-dcp (issue 16): once its 8-turn protection expires, the pages the sim
read in the first prompt become placeholders in the projected input; the question that needs
them ten prompts later makes the sim read them again (the perception rule), which the run
without pruning answers from its context; and the rewritten history shows as prefix breaks."""

from __future__ import annotations

from inspect_ai.model import ChatMessageTool, ChatMessageUser
from sim_harness import Workspace, numbered_file, oracle, run_session

from readbench.agent.loop import FingerprintCache, first_difference
from readbench.dcp import DcpState, ProjectionCache, project
from readbench.metrics.reads import dcp_metrics

BIG = numbered_file(6000).replace("row 03999 value\nrow 04000 value\n",
                                  "def ask_0(x):\n    name = 'answer-zero'\n")
SMALL = "".join(f"setting_{i} = {i * 7}\n" for i in range(1, 101))


def _task():
    steps = [{"kind": "answer", "target_file": "big.py", "search_key": "def ask_0(", "answer": "answer-zero",
              "target_line": 4000}]
    prompts = ["What name does ask_0 in big.py set?"]
    for i in range(1, 10):  # nine short questions about another file keep the session going
        steps.append({"kind": "answer", "target_file": "small.py", "search_key": f"setting_{i * 10} =",
                      "answer": str(i * 70), "target_line": i * 10})
        prompts.append(f"What is setting_{i * 10} in small.py?")
    steps.append({"kind": "answer", "target_file": "big.py", "search_key": "def ask_0(", "answer": "3999",
                  "target_line": 3999})
    prompts.append("On which line of big.py does ask_0 start?")
    return oracle(task_id="long-dcp", family="longsession", prompts=prompts, steps=steps, test_cmd=None)


class _Projector:
    """readbench's loop in small: project before every call and keep each call's log."""

    def __init__(self, config: str) -> None:
        self.config, self.state, self.cache = config, DcpState(), ProjectionCache(max_histories=1)
        self.fingerprints, self.previous, self.calls = FingerprintCache(), [], []

    def __call__(self, history):
        projection = project(history, self.config, state=self.state, cache=self.cache)
        self.state = projection.state
        fps = self.fingerprints(projection.messages)
        broke = first_difference(self.previous, fps) is not None
        self.previous = fps
        self.calls.append({"pruned": dict(projection.stats.pruned), "prefix_break": broke,
                           "footer_tokens_saved": projection.stats.footer_tokens_saved})
        return projection.messages


def _run(config: str):
    projector = _Projector(config)
    trace = run_session("sim-pager", _task(), Workspace({"big.py": BIG, "small.py": SMALL}, "stock"),
                        project=projector, max_calls=200)
    return trace, projector


def _reads_in_last_prompt(trace) -> list[dict]:
    last_user = max(i for i, m in enumerate(trace.messages) if isinstance(m, ChatMessageUser))
    calls = {c.id: c for m in trace.messages[last_user:] for c in (getattr(m, "tool_calls", None) or [])}
    return [calls[m.tool_call_id].arguments for m in trace.messages[last_user:]
            if isinstance(m, ChatMessageTool) and m.function == "read" and m.tool_call_id in calls]


def test_pruned_pages_are_read_again_and_cost_calls_and_prefix_breaks():
    off, off_calls = _run("off")
    pruned, dcp_calls = _run("pi-dcp")
    finals = [o.message.text for o in pruned.outputs if not o.message.tool_calls]
    assert finals[-1].endswith("ANSWER: 3999") and off.outputs[-1].message.text.endswith("ANSWER: 3999")
    # without pruning the first prompt's pages still show line 3999: no read in the last prompt
    assert _reads_in_last_prompt(off) == []
    # under pi-dcp they were replaced by its (Turn N) placeholder, so the sim pages big.py again
    first_of_last = next(v for v in pruned.inputs if isinstance(v[-1], ChatMessageUser) and "ask_0 start" in v[-1].text)
    placeholders = [m.text for m in first_of_last if isinstance(m, ChatMessageTool) and m.text.startswith("[DCP: ")]
    assert sum(t.startswith('[DCP: Large output from read({"path":"big.py"') and "pruned due to age (Turn 10)" in t
               for t in placeholders) == 2  # both pages of the first prompt, 10 user turns old
    again = _reads_in_last_prompt(pruned)
    assert again and all(a["path"] == "big.py" for a in again)
    assert len(pruned.outputs) > len(off.outputs)
    metrics = dcp_metrics(dcp_calls.calls)
    assert metrics["dcp_pruned_items"] > 0 and metrics["dcp_prefix_breaks"] > 0
    assert dcp_metrics(off_calls.calls) == {"dcp_pruned_items": 0.0, "dcp_footer_tokens_saved": 0.0,
                                      "dcp_prefix_breaks": 0.0}
