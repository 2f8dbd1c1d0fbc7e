"""Per-call working context shared by the pi-dcp strategies (docs/specs/dcp.md §1-§2, §6)."""

from __future__ import annotations

from typing import Any

from readbench.dcp._params import PiDcpParams
from readbench.dcp._protection import Protection, ProtectionPolicy
from readbench.dcp._view import PiView, blocks, calls_of, text_chars

__all__ = ["PiDcpRun", "is_dcp_placeholder", "estimate_tokens"]


def estimate_tokens(content: Any) -> int:
    """pi-dcp `estimateTokens`: floor(Σ text-block chars / 4); images count 0 (dcp.md §6)."""
    return text_chars(content) // 4


def is_dcp_placeholder(content: Any) -> bool:
    """Content is a single text block starting with `[DCP:` (already pruned in this pass)."""
    b = blocks(content)
    return len(b) == 1 and b[0][0] == "text" and b[0][1].startswith("[DCP:")


class PiDcpRun:
    """The view being transformed, its protection policy, the tool-call index and counters (one per
    strategy name in `names`: the family's registered strategies).

    `args_of` reads the *current* arguments of a call, so a later strategy sees arguments an
    earlier one replaced (pi-dcp shares the argument objects between its index and messages).
    """

    def __init__(self, view: PiView, params: PiDcpParams, policy: ProtectionPolicy, names: tuple[str, ...]) -> None:
        self.view = view
        self.params = params
        self.policy = policy
        self.pruned = {name: 0 for name in names}
        self.skipped = {name: {"protected": 0, "recent": 0, "other": 0} for name in names}
        self.tokens_saved = 0
        self._call_pos: dict[str, tuple[int, int]] = {}
        for pos in range(len(view)):
            for k, c in enumerate(calls_of(view.original(pos))):
                self._call_pos[c.id] = (pos, k)

    def args_of(self, call_id: str | None) -> dict[str, Any] | None:
        """Current arguments of tool call `call_id`, or None when no such call exists."""
        if call_id is None or call_id not in self._call_pos:
            return None
        pos, k = self._call_pos[call_id]
        return calls_of(self.view.current(pos))[k].arguments

    def protection(self, pos: int, call_id: str | None = None) -> Protection:
        """Protection of view position `pos` (or of one call of it)."""
        return self.policy.get(self.view, pos, call_id)

    def skip(self, strategy: str, reason: str) -> None:
        """Count a skip: `protected`, `recent` or `other`."""
        self.skipped[strategy][reason] += 1

    def check(self, strategy: str, prot: Protection) -> bool:
        """True when `prot` blocks pruning; counts the skip under pi-dcp's reason."""
        if prot.static_or_pin:
            self.skip(strategy, "protected")
            return True
        if prot.protected:
            self.skip(strategy, "recent")
            return True
        return False

    def record(self, strategy: str, tokens: int) -> None:
        """Count one pruned item worth `tokens` in the footer estimate."""
        self.pruned[strategy] += 1
        self.tokens_saved += tokens
