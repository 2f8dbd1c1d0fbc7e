"""The simulated clock (docs/specs/sim-agent.md, "latency model"; drives cache TTL expiry).

Between two model calls the tools of the first call run (``tool_seconds`` each, the task's
test command ``test_seconds``) and, before a new prompt of a multi-prompt session, the user is
idle ``user_gap_seconds``. A call starts at the clock, emits its first token after
``ttft_seconds + ttft_seconds_per_1k_input_tokens * prompt_tokens / 1000`` and ends after
``output_tokens / output_tokens_per_second`` more. All times are seconds from sample start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from readbench.sim.profiles import Profile

__all__ = ["CallTimes", "call_times", "gap_seconds"]


@dataclass(frozen=True)
class CallTimes:
    """Simulated timestamps of one model call, seconds from sample start."""

    start_seconds: float
    first_token_seconds: float
    end_seconds: float

    def metadata(self) -> dict[str, float]:
        """The ``ModelOutput.metadata`` keys the agent loop and cache simulator read."""
        return {
            "sim_ts_start_seconds": self.start_seconds,
            "sim_ts_first_token_seconds": self.first_token_seconds,
            "sim_ts_end_seconds": self.end_seconds,
        }


def gap_seconds(profile: Profile, previous_calls: list[dict[str, Any]], test_cmd: str | None,
                new_prompt: bool) -> float:
    """Time between the end of the previous call and the start of this one, seconds.

    Args:
        profile: knobs ``tool_seconds``, ``test_seconds``, ``user_gap_seconds``.
        previous_calls: tool calls of the previous reply (``[{"function", "arguments"}]``).
        test_cmd: the current goal's test command (its bash run costs ``test_seconds``).
        new_prompt: a new user prompt arrived since the previous call.
    """
    total = 0.0
    for call in previous_calls:
        is_test = call["function"] == "bash" and test_cmd is not None and call["arguments"].get("command") == test_cmd
        total += profile.test_seconds if is_test else profile.tool_seconds
    if new_prompt:
        total += profile.user_gap_seconds
    return total


def call_times(profile: Profile, start_seconds: float, prompt_tokens: int, output_tokens: int) -> CallTimes:
    """Timestamps of a call starting at ``start_seconds`` (prompt and output sizes in tokens)."""
    first = start_seconds + profile.ttft_seconds + profile.ttft_seconds_per_1k_input_tokens * prompt_tokens / 1000
    end = first + output_tokens / profile.output_tokens_per_second
    return CallTimes(round(start_seconds, 6), round(first, 6), round(end, 6))
