"""How readbench runs pi inside a sample's sandbox (GitHub issue 24; agents.md §4).

pi reaches the sample's inspect model through the sandbox agent bridge: a provider `readbench` in
`$PI_CODING_AGENT_DIR/models.json` (`api: openai-completions`, base URL the bridge's port, model
id `inspect`), `pi --print --mode json` with the sample's prompts as messages, pi's default tools
plus `grep` (the tools readbench's loop offers: read, bash, edit, write, grep), the arm's read
extension (`readbench.agents.pi_extension`) with `-e`, extension discovery off, and the session
JSONL written to `--session-dir`, which readbench imports afterwards (readbench.sessions.pi).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from readbench.agents.launch import Launch, LaunchInput

__all__ = ["PiFiles", "launch", "pi_command", "pi_files"]

TOOLS = "read,bash,edit,write,grep"
"""pi's tools an arm enables: readbench's loop's set (readbench.tools.make_tools)."""


@dataclass(frozen=True)
class PiFiles:
    """What readbench writes into the sandbox for one pi run: path -> text."""

    agent_dir: str
    session_dir: str
    extension: str | None
    files: dict[str, str]


def pi_files(work: str, port: int, extension_source: str | None, context_window: int) -> PiFiles:
    """The agent dir (`models.json`, `settings.json`), the extension file and the session dir
    under the sandbox directory `work`.

    Args:
        work: an absolute directory in the sandbox for readbench's files (not the workspace).
        port: the bridge's port in the sandbox.
        extension_source: the read extension (None: stock, no extension).
        context_window: the model's context window pi is told (tokens).
    """
    agent_dir = f"{work}/agent"
    models = {"providers": {"readbench": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "inspect",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "inspect", "name": "inspect (sandbox agent bridge)", "reasoning": False, "input": ["text"],
                    "contextWindow": context_window, "maxTokens": 32_000,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
    }}}
    files = {f"{agent_dir}/models.json": json.dumps(models, indent=2),
             f"{agent_dir}/settings.json": json.dumps({"defaultProvider": "readbench", "defaultModel": "inspect"})}
    ext = None
    if extension_source is not None:
        ext = f"{work}/readbench-read.ts"
        files[ext] = extension_source
    return PiFiles(agent_dir, f"{work}/sessions", ext, files)


def pi_command(node: str, pi: str, files: PiFiles, prompts: list[str], resume: str | None = None,
               continue_extension: str | None = None) -> list[str]:
    """The argv that runs pi once over the sample's prompts (the first, then each follow-up), or,
    with `resume`, once on that session file with no prompt and `continue_extension` loaded, which
    runs pi's loop on from the file's last tool result (readbench.agents.pi_fork).

    Raises:
        ValueError: no prompt and no session to resume; a session to resume with prompts or
            without the continue extension.
    """
    if resume is None and not prompts:
        raise ValueError("a pi run needs at least one prompt")
    if resume is not None and (prompts or continue_extension is None):
        raise ValueError("a resumed pi run takes no prompt and needs the continue extension")
    argv = [node, pi, "--print", "--mode", "json", "--provider", "readbench", "--model", "inspect",
            "--tools", TOOLS, "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-themes",
            "--offline", "--session-dir", files.session_dir]
    if files.extension:
        argv += ["-e", files.extension]
    if resume is not None and continue_extension is not None:
        return argv + ["-e", continue_extension, "--session", resume]
    return argv + ["--", *prompts]


def newest_session(listing: str, session_dir: str) -> str:
    """The session file in `ls -t` output `listing` of `session_dir` (the newest `.jsonl`).

    Raises:
        RuntimeError: pi wrote no session file.
    """
    names = [n for n in listing.split() if n.endswith(".jsonl")]
    if not names:
        raise RuntimeError(f"pi wrote no session file in {session_dir}")
    return str(Path(session_dir) / names[0])


def launch(given: LaunchInput) -> Launch:
    """pi's `Launch` (readbench.agents.launch): the agent dir, the arm's extension and one
    `pi --print` over every prompt (or, with `given.resume`, on that session with the continue
    extension, no prompt: a forked arm); the session JSONL from `--session-dir`.

    Raises:
        ValueError: a read preset pi's extension cannot express (named).
    """
    from readbench.agents.pi_extension import pi_extension

    files = pi_files(given.work, given.port, pi_extension(given.variant), given.context_window)
    cont = None
    if given.resume is not None:
        from readbench.agents.pi_fork import CONTINUE_EXTENSION

        cont = f"{given.work}/readbench-continue.ts"
        files.files[cont] = CONTINUE_EXTENSION
    env = {**given.env, "PI_CODING_AGENT_DIR": files.agent_dir, "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
           "HOME": given.work}
    argv = pi_command(given.node, given.exe, files, [] if given.resume else given.prompts, given.resume, cont)
    return Launch(files.files, [argv], env, files.session_dir,
                  "readbench.sessions.pi")
