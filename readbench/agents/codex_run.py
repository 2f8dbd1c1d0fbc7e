"""How readbench runs Codex CLI inside a sample's sandbox (GitHub issue 24; agents.md §2).

Codex reaches the sample's inspect model through the sandbox agent bridge's OpenAI Responses
side, configured as inspect-swe's `codex_cli` does it: `$CODEX_HOME/config.toml` names a model
provider `readbench` (`base_url` the bridge's port, `wire_api = "responses"`, the API key from
`OPENAI_API_KEY`, a long stream idle timeout), analytics off, web search disabled (the sandbox is
offline). `codex exec --color never --skip-git-repo-check --model <slug>
--dangerously-bypass-approvals-and-sandbox PROMPT` runs the first prompt; each follow-up prompt is
`codex exec ... resume --last PROMPT`, continuing the same rollout. The model slug selects Codex's
system prompt and tool set (the bridge relays every model name to the sample's model);
`MODEL_SLUG` is Codex's fallback profile. Codex's own sandbox is off (approval `never`, full
access), as inspect-swe's default: the task's sandbox is the boundary, and Codex's Linux sandbox
needs bubblewrap and user namespaces the task images do not have.

Codex writes its rollout under `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, which readbench
imports afterwards (readbench.sessions.codex).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from readbench.agents.launch import Launch, LaunchInput

__all__ = ["MODEL_SLUG", "CodexFiles", "codex_commands", "codex_env", "codex_files", "launch"]

MODEL_SLUG = "gpt-5.5"
"""The `--model` Codex is given: no entry of Codex's model catalog, so Codex runs its fallback
profile (its base instructions and the unified-exec tool set: `exec_command`, `write_stdin`, ...;
it warns "Model metadata for `inspect` not found")."""


@dataclass(frozen=True)
class CodexFiles:
    """What readbench writes into the sandbox for one Codex run: `CODEX_HOME`, where the rollouts
    go, and path -> text."""

    home: str
    session_dir: str
    files: dict[str, str]


def codex_files(work: str, port: int) -> CodexFiles:
    """`CODEX_HOME` (`config.toml`) under the sandbox directory `work` (not the workspace).

    Args:
        work: an absolute directory in the sandbox for readbench's files.
        port: the bridge's port in the sandbox.
    """
    home = f"{work}/codex-home"
    config = "\n".join([
        'model_provider = "readbench"',
        'preferred_auth_method = "apikey"',
        'web_search = "disabled"',
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[model_providers.readbench]",
        'name = "readbench (inspect sandbox agent bridge)"',
        f'base_url = "http://127.0.0.1:{port}/v1"',
        'env_key = "OPENAI_API_KEY"',
        'wire_api = "responses"',
        "stream_idle_timeout_ms = 3600000",
        "",
    ])
    return CodexFiles(home, f"{home}/sessions", {f"{home}/config.toml": config})


def codex_commands(codex: list[str], prompts: list[str], model: str = MODEL_SLUG) -> list[list[str]]:
    """One argv per prompt: `codex exec` for the first, `codex exec resume --last` for each follow-up.

    Args:
        codex: the argv that starts Codex (`[node, .../bin/codex]`).
        prompts: the sample's prompts, in order.
        model: the `--model` slug (module docstring).

    Raises:
        ValueError: no prompt.
    """
    if not prompts:
        raise ValueError("a Codex run needs at least one prompt")
    base = [*codex, "exec", "--color", "never", "--skip-git-repo-check", "--model", model,
            "--dangerously-bypass-approvals-and-sandbox"]
    return [[*base, prompts[0]]] + [[*base, "resume", "--last", p] for p in prompts[1:]]


def codex_env(files: CodexFiles) -> dict[str, str]:
    """The environment Codex needs besides the workspace's: `CODEX_HOME`, a placeholder API key
    (the bridge needs none), warnings-only logging."""
    return {"CODEX_HOME": files.home, "OPENAI_API_KEY": "inspect", "RUST_LOG": "warning"}


def launch(given: LaunchInput) -> Launch:
    """Codex's `Launch` (readbench.agents.launch): `CODEX_HOME` with its config, `codex exec` per
    prompt, the rollout from `$CODEX_HOME/sessions`, its shell reads counted as reads and its context
    blocks no prompts.

    Raises:
        ValueError: a read preset other than stock (Codex reads through its shell: no extension point
            can change its reads; readbench.harness.agents.check_arm names the refusal first).
    """
    from readbench.agents.launch import Launch
    from readbench.harness.codex import CONTEXT_PREFIXES
    from readbench.read import get_variant

    if get_variant(given.variant).name != "stock":
        raise ValueError(f"Codex runs read preset 'stock' only (it reads through its shell), not "
                         f"{get_variant(given.variant).name!r}")
    files = codex_files(given.work, given.port)
    env = {**given.env, "HOME": given.work, **codex_env(files)}
    return Launch(files.files, codex_commands([given.node, given.exe], given.prompts), env, files.session_dir,
                  "readbench.sessions.codex", shell_reads=True, context_prefixes=CONTEXT_PREFIXES)
