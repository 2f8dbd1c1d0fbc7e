"""The calibration records of a recorded session's replay (docs/specs/sessions.md §5).

`Calibration` says how to turn a recorded session into what the provider most likely received
(readbench.replay.requests renders it; readbench.replay.calibrate fits it from the bill):
a token fit per model (`TokenFit`), the unrecorded head, exogenous prefix breaks (`Break`),
unrecorded insertions (`Insertion`), the TTL tier and the cold start; `CALL_KINDS` and
`kind_rate` give the expected break rate of a call the fit did not see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CALL_KINDS", "Break", "Calibration", "Insertion", "TokenFit", "kind_rate"]


@dataclass(frozen=True)
class TokenFit:
    """billed ~ a x counted + b per block (tokens), for one model.

    Attributes:
        a: multiplier on readbench's count (dimensionless).
        b: tokens added per block (framing, unrecorded per-block content).
        n: consecutive-call pairs the fit used (0 = not fitted: the identity).
        source: where it came from (`identity`, `session fit`, `calibration table <date>`).
    """

    a: float = 1.0
    b: float = 0.0
    n: int = 0
    source: str = "identity"

    def apply(self, tokens: int) -> int:
        """Calibrated tokens of one block: round(a x tokens + b), at least 0."""
        return max(int(round(self.a * tokens + self.b)), 0)


@dataclass(frozen=True)
class Break:
    """An exogenous prefix change: from call `call_index` on, content from token `token_position`
    on differs from what the recording shows (e.g. a restart that re-rendered the system prompt).

    Attributes:
        call_index: the first call that sent the changed bytes.
        token_position: first token (in the calibrated request) whose block changed; 0 = all.
        billed_read: the cache read the bill shows at that call (tokens), for the record.
    """

    call_index: int
    token_position: int
    billed_read: int


@dataclass(frozen=True)
class Insertion:
    """Unrecorded content the bill shows entering one context at one call and staying there (e.g.
    Claude Code's plan-mode instructions or the files it re-attaches after a compaction,
    sessions.md §2): from call `call_index` on, every call of context `context` carries a block of
    `tokens` billed tokens right after its first `after_messages` non-system messages.

    Attributes:
        call_index: the first call that sent it.
        context: the context (Session.contexts index) it belongs to.
        after_messages: non-system messages before it (the messages the previous call sent).
        tokens: its size in billed tokens (not rescaled by the token fit).
    """

    call_index: int
    context: int
    after_messages: int
    tokens: int


@dataclass(frozen=True)
class Calibration:
    """How to turn a recorded session into provider requests (module docstring).

    Attributes:
        tokens: canonical model -> TokenFit (a model absent here uses the identity).
        heads: model -> its unrecorded head, in tokens (absent = none).
        head_cuts: token offsets inside a head where it splits into separate blocks (from
            partial reads inside the head and a cold start's read).
        context_extra: (model, context index) -> unrecorded tokens at the start of that
            context's messages (absent = none).
        tier: the write TTL tier (`5m` or `1h`), None when unknown.
        cold_start_tokens: tokens of the first request already cached by an earlier session.
        breaks: exogenous prefix changes, by call.
        break_rates: call kind (`CALL_KINDS`: a call that sends tool results, a new user prompt,
            a prompt after an aborted call, ...) -> the share of priced calls of that kind in the
            fitted window that were exogenous breaks: the expected rate for calls the fit did not
            see (`kind_rate`: an unseen kind takes its coarser kind's rate).
        break_counts: call kind -> (breaks, priced calls) behind `break_rates`.
        insertions: unrecorded content entering a context mid-way, inferred from the bill.
        granularity: model -> the hit granularity its bills show (tokens: every billed cache read
            a multiple of it), for providers that floor hits (`readbench.replay.calibrate.
            infer_granularity`); absent = models.csv `granularity_tokens`.
        notes: what was fitted and what could not be, in words.
    """

    tokens: dict[str, TokenFit] = field(default_factory=dict)
    heads: dict[str, int] = field(default_factory=dict)
    head_cuts: tuple[int, ...] = ()
    context_extra: dict[tuple[str, int], int] = field(default_factory=dict)
    tier: str | None = None
    cold_start_tokens: int = 0
    breaks: tuple[Break, ...] = ()
    break_rates: dict[str, float] = field(default_factory=dict)
    break_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    insertions: tuple[Insertion, ...] = ()
    granularity: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def head(self, model: str) -> int:
        """The unrecorded head of `model`'s requests (tokens)."""
        return self.heads.get(model, 0)


#: Call kinds (`RequestSet.call_kind`) and the coarser kind whose break rate stands in for one
#: the fitted calls never saw (`user_turn`: every kind of user turn together).
CALL_KINDS: dict[str, str | None] = {
    "tool": None, "opening": None, "user_turn": None, "prompt": "user_turn", "resume": "user_turn", "after_abort": "user_turn",
    "notification": "user_turn", "command": "user_turn", "thinking_change": "user_turn", "model_change": "user_turn",
}


def kind_rate(rates: dict[str, float], kind: str | None) -> float:
    """The break rate of `kind`, or of its coarser kind when `kind` was not seen (0 when neither)."""
    while kind is not None:
        if kind in rates:
            return rates[kind]
        kind = CALL_KINDS.get(kind)
    return 0.0
