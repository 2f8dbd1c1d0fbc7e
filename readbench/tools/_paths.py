"""Path handling shared by the tool adapters (pi's `path-utils.js`, docs/specs/pi-tools.md §1.2)."""

from __future__ import annotations

import posixpath


def pi_path(raw: str) -> str:
    """Apply pi's argument normalisation: strip one leading ``@`` (pi-tools.md §1.2 step 1).

    ``~`` expansion is left to the sandbox shell; readbench workspaces never use it.
    """
    return raw[1:] if raw.startswith("@") else raw


def absolute(cwd: str, raw: str) -> str:
    """Resolve ``raw`` against ``cwd`` like Node's ``path.resolve`` (normalised, absolute)."""
    path = pi_path(raw)
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd, path))
