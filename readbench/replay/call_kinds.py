"""What started each call of a recorded session, from recorded facts only (sessions.md §5;
docs/calibration.md §5 step 7): the kinds `readbench.replay.calibrate` counts exogenous breaks
by (`break_counts`) and the bill check prices expected breaks with (`CALL_KINDS`, `kind_rate` in
readbench.replay.records).

- `tool`: the call sends tool results; `opening` when it does so inside the session's first user
  turn (before any later user turn: Claude Code's first calls break at ten times the rate of
  later ones on real bills, so they are counted apart from the tool calls of the rest of a
  session);
- a user turn is `prompt`, or more precisely (first match) `resume` (the harness restarted before
  it), `after_abort` (the previous call was aborted or errored), `notification` (Claude Code's
  background-task notification), `command` (the user's own command output, e.g. Claude Code's
  `/mcp`), `thinking_change` or `model_change` (an event at this call).

Exogenous breaks are counted per kind (sessions.md §5: restarts and notification turns break the
prefix, tool calls do not).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageTool, ChatMessageUser

from readbench.sessions import Session

__all__ = ["CallKinds"]


class CallKinds:
    """The kind of each call of `session` (module docstring), worked out on first use and memoised.

    Args:
        session: the imported session.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self._kinds: list[str | None] = [None] * len(session.calls)
        self._events: dict[int, set[str]] | None = None
        self._run = 1  # calls 1 .. _run - 1 are known to be `opening`

    def __getitem__(self, i: int) -> str:
        """The kind of call i (module docstring).

        Raises:
            IndexError: no call i.
        """
        kind = self._kinds[i]
        if kind is None:
            kind = self._kinds[i] = self._kind(i)
        return kind

    def _openings_before(self, i: int) -> bool:
        """True when calls 1 .. i - 1 are all `opening`: the known run of them from call 1 is
        extended as far as asked (each call checked once, not once per later call)."""
        while self._run < i:
            if self[self._run] != "opening":
                return False
            self._run += 1
        return True

    def _kind(self, i: int) -> str:
        if self._events is None:
            self._events = {}
            for e in self.session.events:
                self._events.setdefault(e.call_index, set()).add(e.kind)
        call = self.session.calls[i]
        ctx = self.session.contexts[call.context]
        last = ctx[call.n_messages - 1] if call.n_messages else None
        if isinstance(last, ChatMessageTool) or not isinstance(last, ChatMessageUser):
            return "opening" if i > 0 and self._openings_before(i) else "tool"
        events = self._events.get(i, set())
        if "resume" in events:
            return "resume"
        prev = self.session.calls[i - 1] if i > 0 else None
        if prev is not None and (prev.stop_reason in ("aborted", "error") or (prev.usage is not None and prev.usage.input_tokens == 0)):
            return "after_abort"
        text = last.text.lstrip()
        if text.startswith("<task-notification>"):
            return "notification"
        if text.startswith(("<local-command-stdout>", "<command-name>", "<local-command-caveat>")):
            return "command"
        for kind in ("thinking_change", "model_change"):
            if kind in events:
                return kind
        return "prompt"
