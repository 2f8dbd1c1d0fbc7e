"""Incremental observation masking (same results as `strategies.obs_mask.apply`, anchors.md §1).

The placeholder of a masked result depends only on its original content, so each result's
replacement is built once per history (`SeqBase.replaced`) and reused on later calls.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage

from readbench.dcp._params import ObsMaskParams
from readbench.dcp._seq import SeqBase
from readbench.dcp.strategies import obs_mask

__all__ = ["ObsSeq"]


class ObsSeq(SeqBase):
    """Observation masking (`strategies.obs_mask`) over one growing history."""

    def __init__(self, params: ObsMaskParams) -> None:
        super().__init__()
        self.params = params
        self.masked = 0
        self.saved = 0
        self.out: list[ChatMessage] = []
        self.changed: list[int] = []

    def run(self) -> tuple[list[ChatMessage], tuple[int, ...], int, int]:
        """(output list, replaced input indices ascending, results masked, Σ floor(text chars / 4)
        of their original text). Masking only extends as results are appended."""
        self.out.extend(self.msgs[len(self.out):])
        results, index = self.results, self.index
        cut = max(0, len(results) - self.params.keep_last)
        for k in range(self.masked, cut):
            i = index[results[k]]
            self.out[i] = self.replaced(k, obs_mask.placeholder(self.params, self.msgs[i].content))
            self.changed.append(i)
            self.saved += self.r_chars[k] // 4
        self.masked = max(self.masked, cut)
        return list(self.out), tuple(self.changed), self.masked, self.saved
