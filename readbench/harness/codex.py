"""Codex CLI (`@openai/codex`): its tools as its rollouts record them (docs/specs/sessions.md §3).
Codex has no read tool: it reads through its shell (`shell {command: argv}`, `exec_command {cmd}`,
`local_shell`, whose calls the rollout writes as `local_shell_call` items with the argv under
`action.command` (imported under that item type's name), and `shell_command {command}`,
PowerShell on Windows), so no read preset reproduces it; `apply_patch` (its patch text under
`input`) changes files."""

from readbench.harness._record import Harness, NpmPin, ShellTool

CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "<skills_instructions>", "# AGENTS.md instructions",
                    "<permissions instructions>", "<turn_aborted>", "<collaboration_mode>")
"""How the context blocks Codex sends as user messages begin (cli 0.171.0: environment, skills,
AGENTS.md): they are not the user's prompts."""

HARNESS = Harness(
    name="codex",
    title="Codex CLI",
    origin="Codex CLI rollout items (sessions.md §3; cli 0.1x-0.144 as recorded)",
    shell_tools=(ShellTool("shell"), ShellTool("exec_command", "cmd"), ShellTool("local_shell"),
                 ShellTool("local_shell_call"), ShellTool("shell_command", powershell=True)),
    edit_tools=("apply_patch",),
    path_keys=(),
    read_preset=None,
    sessions="Codex rollout JSONL (token_count and item-only): readbench.sessions.codex",
    npm=(NpmPin("@openai/codex", "0.171.0",
                "sha512-1IOFzL2Xg86tLdw6kDo3GoKbkQENgQi7TI6rlEvN132R7ngSw7SNOIQoTcnKzSZZ8kf9N9GynCweSoaFbqk2Eg==",
                "codex", ">=16"),),
    own_read="Codex's shell (it has no read tool, so no read preset applies to it)",
    runs="codex exec --model gpt-5.5 at inspect's sandbox agent bridge (model provider in $CODEX_HOME/config.toml, "
         "Responses API; readbench.agents.codex_run); rollout under $CODEX_HOME/sessions",
)
