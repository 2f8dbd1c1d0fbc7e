"""Request-by-request differences between two runs of one sample (GitHub issue 24 item 5): the
real harness against readbench's loop under the same scripted model, compared on what each sent
to the model (inspect `ModelEvent`s: the input messages, the tool schemas).

`request_differences` names each kind of difference once, with the first call it appears in, so a
test can assert the exact set: everything not named is equal message by message.
"""

from __future__ import annotations

from typing import Any

__all__ = ["request_differences"]


def _text(message: Any) -> str:
    error = getattr(message, "error", None)
    return error.message if error is not None else message.text


def request_differences(ours: list[Any], theirs: list[Any]) -> dict[str, int]:
    """{difference: first call index} between two lists of `ModelEvent`s (same sample).

    Names: `calls` (a different number of calls), `tool <name> description`, `tool <name>
    parameters`, `tools` (other names or order), `messages` (a different count at a call),
    `<role> <i> text` (message i's text, an error's message standing for its text),
    `<role> <i> error flag`, `assistant <i> tool calls` (other functions or arguments).
    """
    out: dict[str, int] = {}
    if len(ours) != len(theirs):
        out["calls"] = min(len(ours), len(theirs))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        if [t.name for t in a.tools] != [t.name for t in b.tools]:
            out.setdefault("tools", k)
        for t1, t2 in zip(a.tools, b.tools):
            if t1.description != t2.description:
                out.setdefault(f"tool {t1.name} description", k)
            if t1.parameters != t2.parameters:
                out.setdefault(f"tool {t1.name} parameters", k)
        if len(a.input) != len(b.input):
            out.setdefault("messages", k)
        for i, (m1, m2) in enumerate(zip(a.input, b.input)):
            if m1.role != m2.role:
                out.setdefault(f"message {i} role", k)
                continue
            if _text(m1) != _text(m2):
                out.setdefault(f"{m1.role} {i} text", k)
            if m1.role == "tool" and (getattr(m1, "error", None) is None) != (getattr(m2, "error", None) is None):
                out.setdefault(f"tool {i} error flag", k)
            if m1.role == "assistant":
                c1 = [(c.function, c.arguments) for c in m1.tool_calls or []]
                c2 = [(c.function, c.arguments) for c in m2.tool_calls or []]
                if c1 != c2:
                    out.setdefault(f"assistant {i} tool calls", k)
    return out
