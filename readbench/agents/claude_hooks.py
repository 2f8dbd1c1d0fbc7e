"""A read preset as Claude Code project hooks (GitHub issue 24 item 2; agents.md §3).

Claude Code's own `Read` is what `stock` means on it: no hook. A preset of the `paged` family that
refuses an over-cap read (B and presets derived from it) is a `PreToolUse` hook on `Read`: a Node
script (the same decision code as the pi extension, `readbench.agents.pi_extension.core_source`)
reads the call from stdin and, when the requested selection is over the preset's caps, answers
`permissionDecision: "deny"` with the preset's refusal text as `permissionDecisionReason` (shown to
the model). The artefact is what a user ships: `<project>/.claude/settings.json` plus the script.

Not run yet: readbench does not start Claude Code in the sandbox (the simulated agent would need its
actions mapped to Claude Code's tool names); the hook itself is tested under Node.
"""

from __future__ import annotations

from typing import Any

from readbench.agents.pi_extension import blocking_preset, core_source

__all__ = ["CLAUDE_OWN", "claude_hook", "claude_settings"]

CLAUDE_OWN = r"\.(jpe?g|png|gif|webp|bmp|pdf|ipynb)$"
"""Files Claude Code's Read serves itself whatever the preset (images, PDFs, notebooks)."""

_HOOK = r"""// Written by readbench from read preset __NAME__ (readbench.agents.claude_hooks). Do not edit.
__CORE__
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const call = JSON.parse(input || "{}");
  if (call.tool_name !== "Read") return;
  const args = call.tool_input ?? {};
  const reason = decide(args.file_path, args.offset, args.limit, call.cwd ?? process.cwd());
  if (reason === null) return;
  process.stdout.write(JSON.stringify({ hookSpecificOutput: {
    hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } }));
});
"""


def claude_hook(variant: str | dict[str, Any]) -> str | None:
    """The PreToolUse hook script (Node, ES module) expressing read preset `variant`, or None for
    `stock` (Claude Code's own Read).

    Raises:
        ValueError: an unknown preset, or one Claude Code cannot express (named).
    """
    v = blocking_preset(variant, "a Claude Code hook (it")
    if v is None:
        return None
    return _HOOK.replace("__CORE__", core_source(v, CLAUDE_OWN)).replace("__NAME__", v.name)


def claude_settings(node: str, hook_path: str) -> dict[str, Any]:
    """`<project>/.claude/settings.json` running the hook at `hook_path` with `node` before every Read."""
    return {"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": f"{node} {hook_path}"}]}]}}
