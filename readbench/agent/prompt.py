"""pi 0.84.1's default system prompt, rebuilt for readbench's tool set
(docs/specs/pi-tools.md §2.2, the [084] flat layout).

Differences from pi, on purpose: the "Pi documentation" block is omitted (it points at files
that do not exist in the sandbox), and `grep` is active, so its snippet is listed and guideline
1 ("Use bash for file operations like ls, rg, find") is dropped exactly as pi drops it when
grep is active. The read variant contributes its own guideline lines (``prompt_lines``).
"""

from __future__ import annotations

from readbench.read import ReadVariant

PREAMBLE = (
    "You are an expert coding assistant operating inside pi, a coding agent harness. "
    "You help users by reading files, executing commands, editing code, and writing new files."
)
SNIPPETS = [
    "- read: Read file contents",
    "- bash: Execute bash commands (ls, grep, find, etc.)",
    "- edit: Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
    "- write: Create or overwrite files",
    "- grep: Search file contents for patterns (respects .gitignore)",
]
OTHER_GUIDELINES = [
    "You can inspect PI_* environment variables for current model and session details.",
    "Use edit for precise changes (edits[].oldText must match exactly)",
    "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls",
    "Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not emit overlapping or nested edits. Merge nearby changes into one edit.",
    "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large unchanged regions.",
    "Use write only for new files or complete rewrites.",
    "Be concise in your responses",
    "Show file paths clearly when working with files",
]


def system_prompt(variant: ReadVariant, cwd: str) -> str:
    """The system prompt of one arm.

    Args:
        variant: the read preset; its ``prompt_lines`` replace pi's read guideline
            ("Use read to examine files instead of cat or sed.") where the preset changes it.
        cwd: the sandbox working directory (absolute path).

    Returns:
        The prompt text, lines joined with ``\\n`` as pi's [084] layout does.
    """
    guidelines = [*variant.prompt_lines, *OTHER_GUIDELINES]
    lines = [
        PREAMBLE,
        "",
        "Available tools:",
        *SNIPPETS,
        "",
        "In addition to the tools above, you may have access to other custom tools depending on the project.",
        "",
        "Guidelines:",
        *[f"- {g}" for g in guidelines],
        "",
        f"Current working directory: {cwd}",
    ]
    return "\n".join(lines)
