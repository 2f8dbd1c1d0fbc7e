"""Builders of small pi (legacy format) sessions for the replay tests: every call's billed usage
and timing are chosen by the test (`PiSessionFile`), or simulated from a planted truth
(`planted_session`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from readbench.cache.prices import canonical_model
from readbench.replay.bill import session_date as session_day
from readbench.replay.records import Break, Calibration, Insertion, TokenFit
from readbench.replay.requests import RequestSet
from readbench.replay.simulate import run
from readbench.sessions import load_file

#: The planted truth of `planted_session`: billed = A x counted + B per block, an unrecorded head
#: of HEAD tokens, and a restart (an exogenous break at position 0) before call RESTART.
A, B, HEAD, RESTART = 1.2, 10.0, 3000, 12
#: With `insertion=True`: unrecorded content of INSERTED tokens enters the context at call
#: INSERT_AT (after the messages call INSERT_AT - 1 sent) and stays, as Claude Code's plan-mode
#: instructions do (sessions.md §2).
INSERT_AT, INSERTED = 7, 2500

T0_MS = 1763683200000  # 2025-11-21T00:00:00Z


class PiSessionFile:
    """Accumulates legacy pi entries (one linear path); `write` saves them as JSONL."""

    def __init__(self, model: str = "claude-sonnet-4-5", thinking: str = "off") -> None:
        self.model = model
        self.lines: list[dict[str, Any]] = [{"type": "session", "id": "replay-test", "timestamp": "2025-11-21T00:00:00.000Z",
                                             "cwd": "/p", "provider": "anthropic", "modelId": model, "thinkingLevel": thinking}]

    def user(self, text: str) -> PiSessionFile:
        self.lines.append({"type": "message", "timestamp": "2025-11-21T00:00:00.000Z",
                           "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}})
        return self

    def bash(self, command: str, output: str) -> PiSessionFile:
        self.lines.append({"type": "message", "timestamp": "2025-11-21T00:00:00.000Z", "message": {
            "role": "bashExecution", "command": command, "output": output, "exitCode": 0, "cancelled": False,
            "truncated": False, "timestamp": 0}})
        return self

    def assistant(self, text: str, at_s: float, usage: tuple[int, int, int, int], *, took_s: float = 2.0,
                  calls: tuple[tuple[str, str, dict], ...] = (), stop: str | None = None,
                  thinking: str | None = None) -> PiSessionFile:
        """One call at `at_s` seconds after T0; usage = (input, cacheRead, cacheWrite, output);
        `thinking`: a thinking block (with a signature) before the text."""
        inp, read, write, out = usage
        content: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking, "thinkingSignature": "sig"}] \
            if thinking is not None else []
        content += [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
        end_ms = T0_MS + int((at_s + took_s) * 1000)
        self.lines.append({"type": "message", "timestamp": _iso(end_ms), "message": {
            "role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
            "model": self.model, "usage": {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write,
                                           "totalTokens": inp + out + read + write},
            "stopReason": stop or ("toolUse" if calls else "stop"), "timestamp": T0_MS + int(at_s * 1000)}})
        return self

    def result(self, call_id: str, text: str, name: str = "read") -> PiSessionFile:
        self.lines.append({"type": "message", "timestamp": "2025-11-21T00:00:00.000Z", "message": {
            "role": "toolResult", "toolCallId": call_id, "toolName": name, "content": [{"type": "text", "text": text}],
            "isError": False, "timestamp": 0}})
        return self

    def entry(self, obj: dict[str, Any]) -> PiSessionFile:
        self.lines.append(obj)
        return self

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(x) + "\n" for x in self.lines), encoding="utf-8")
        return path


def _iso(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def planted_session(tmp_path: Path, pi_session: type[PiSessionFile], insertion: bool = False) -> tuple[Path, list]:
    """A 41-call pi session whose bill is simulated from a planted truth (A, B, HEAD, RESTART,
    and with `insertion` INSERT_AT / INSERTED)."""
    b = pi_session()
    b.user("Read the modules one by one and summarise them.")
    t = 0.0
    for k in range(40):
        cid = f"c{k}"
        b.assistant(f"Step {k}.", t, (0, 0, 0, 20), calls=((cid, "read", {"path": f"m{k}.py"}),))
        body = "".join(f"def f{k}_{j}(x):\n    return x * {j}\n" for j in range(20 + 7 * (k % 5)))
        b.result(cid, body)
        t += 6.0 + (k % 3)
    b.assistant("Summary.", t, (0, 0, 0, 30))
    path = b.write(tmp_path / "planted.jsonl")
    # the truth: simulate the recorded requests under the planted calibration, write that bill back
    (s,) = load_file(path)
    models = [canonical_model(c.model) for c in s.calls]
    rs = RequestSet(s, "anthropic-legacy", models)
    inserted = (Insertion(INSERT_AT, s.calls[INSERT_AT].context, s.calls[INSERT_AT - 1].n_messages, INSERTED),) if insertion else ()
    truth = Calibration(tokens={models[0]: TokenFit(A, B, 1, "planted")}, heads={models[0]: HEAD},
                        breaks=(Break(RESTART, 0, 0),), tier="5m", insertions=inserted)
    usages = [u for _, u, _ in run(s, rs, truth, "anthropic-5m", session_day(s), 300.0)]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    calls = [x for x in lines if x.get("message", {}).get("role") == "assistant"]
    for entry, u in zip(calls, usages, strict=True):
        entry["message"]["usage"].update(input=u.uncached_input_tokens, cacheRead=u.cache_read_tokens,
                                         cacheWrite=u.cache_write_tokens)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path, usages


def _date(session):
    from readbench.replay.bill import session_date

    return session_date(session)
