"""The prose of a simulated turn: the action's intent plus filler reasoning up to the drawn
``think_tokens`` (docs/specs/sim-agent.md, knob ``think_tokens``). The filler only carries
token volume (output tokens, latency, cache blocks); it claims nothing about file contents.
"""

from __future__ import annotations

from readbench.cache.tokenizer import count_tokens
from readbench.sim.draws import Draws

__all__ = ["compose"]

_FILLER = (
    "I want to understand the surrounding code before changing anything.",
    "The issue description points at this part of the module.",
    "I will keep the change as small as possible.",
    "Checking how the callers use this function.",
    "The behaviour described in the task should follow from this logic.",
    "Let me make sure I look at the right definition.",
    "I should confirm the exact text before relying on it.",
    "This is consistent with what the task describes.",
    "There may be related helpers nearby.",
    "I will verify the result once the change is made.",
)


def compose(intent: str, target_tokens: int, draws: Draws, *key: object) -> str:
    """``intent`` followed by filler sentences, cut to the last word that keeps the text within
    ``target_tokens`` tokens (o200k_base), so a turn's prose is the drawn size to a token or two
    (readbench.sim.fit reads the knob back from it); never shorter than ``intent``. Sentence
    choice is drawn with ``key`` so it is reproducible."""
    sentences = [intent]
    i = 0
    while count_tokens(" ".join(sentences)) < target_tokens:
        sentences.append(_FILLER[int(draws.unit("filler", *key, i) * len(_FILLER))])
        i += 1
    if len(sentences) == 1:
        return intent
    words = " ".join(sentences).split(" ")
    floor = len(intent.split(" "))
    while len(words) > floor and count_tokens(" ".join(words)) > target_tokens:
        words.pop()
    return " ".join(words)
