"""pi 0.84.1's edit tool as pure functions (docs/specs/pi-tools.md §4; `dist/core/tools/edit.js`).

Two steps, as in pi's agent loop:

1. `normalize_edit_args(args)`: `prepareArguments` (edits sent as a JSON string, legacy top-level
   `oldText`/`newText`), then pi-ai's TypeBox `Value.Convert` + schema check. Returns `EditArgs` or
   raises `PiEditError` with pi's validation text.
2. `apply_edits(content, path, edits)`: what `execute` does once the file's bytes are read: strip and
   restore the BOM, CRLF to LF and back, exact-then-fuzzy matching, and pi's verbatim errors.

File access (ENOENT: `Could not edit file: {path}. Error code: ENOENT.`, EISDIR) is the sandbox
adapter's job; `missing_file_text(path)` gives the ENOENT text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from readbench.base.js import decode_utf8, js_json_stringify, js_number_str
from readbench.tools.pi._edit_match import PiEditError, apply_edits_to_normalized_content, normalize_to_lf

__all__ = ["EditArgs", "EditOutcome", "PiEditError", "apply_edits", "missing_file_text", "normalize_edit_args"]


@dataclass(frozen=True)
class EditArgs:
    """Validated edit arguments: `path` as sent (after TypeBox string conversion) and the
    `(old_text, new_text)` pairs, legacy top-level pair last."""

    path: str
    edits: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class EditOutcome:
    """Result of `apply_edits`.

    Exactly one of `new_content`/`error_text` is set. `new_content` is the file's new bytes as
    pi writes them (UTF-8, original BOM and CRLF restored); `error_text` is pi's isError text;
    `success_text` is `Successfully replaced {n} block(s) in {path}.`; `n_blocks` counts edits.
    """

    new_content: bytes | None
    error_text: str | None
    success_text: str | None
    n_blocks: int

    @property
    def ok(self) -> bool:
        """True when the edit applies (pi's isError false)."""
        return self.error_text is None


def missing_file_text(path: str) -> str:
    """pi's edit error for a file that does not exist (access fails with ENOENT; pi-tools.md §4)."""
    return f"Could not edit file: {path}. Error code: ENOENT."


def _detect_line_ending(content: str) -> str:
    """pi `detectLineEnding`: CRLF only if the first `\\r\\n` is the first `\\n`."""
    crlf = content.find("\r\n")
    lf = content.find("\n")
    if lf == -1 or crlf == -1:
        return "\n"
    return "\r\n" if crlf < lf else "\n"


def _encode_like_node(text: str) -> bytes:
    """UTF-8 bytes as Node's `writeFile(path, text, "utf-8")` writes them (lone surrogate -> U+FFFD)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text).encode("utf-8")


def apply_edits(content: bytes | str, path: str, edits: list[dict[str, str]] | EditArgs) -> EditOutcome:
    """Apply pi's edit semantics to one file's content (pi-tools.md §4).

    Args:
        content: the file's bytes (decoded as Node does: invalid UTF-8 becomes U+FFFD and is
            written back that way) or already-decoded text.
        path: the path argument as the model sent it; it appears verbatim in the texts.
        edits: `[{"oldText": ..., "newText": ...}, ...]` (already validated, e.g. by
            `normalize_edit_args`), or an `EditArgs`.

    Returns:
        EditOutcome with the new bytes and success text, or pi's error text.

    Raises:
        ValueError: if `edits` is not a list of dicts with string `oldText`/`newText`.
    """
    pairs = _pairs(edits)
    if not pairs:
        return EditOutcome(None, "Edit tool input is invalid. edits must contain at least one replacement.", None, 0)
    raw = decode_utf8(content) if isinstance(content, (bytes, bytearray)) else content
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    text = raw[len(bom) :]
    ending = _detect_line_ending(text)
    try:
        new_text = apply_edits_to_normalized_content(normalize_to_lf(text), pairs, path)
    except PiEditError as error:
        return EditOutcome(None, str(error), None, len(pairs))
    if ending == "\r\n":
        new_text = new_text.replace("\n", "\r\n")
    return EditOutcome(
        _encode_like_node(bom + new_text), None, f"Successfully replaced {len(pairs)} block(s) in {path}.", len(pairs)
    )


def _pairs(edits: list[dict[str, str]] | EditArgs) -> list[tuple[str, str]]:
    if isinstance(edits, EditArgs):
        return list(edits.edits)
    if not isinstance(edits, list):
        raise ValueError(f"edits must be a list of {{oldText, newText}} dicts, got {edits!r}")
    pairs = []
    for i, edit in enumerate(edits):
        if not (isinstance(edit, dict) and isinstance(edit.get("oldText"), str) and isinstance(edit.get("newText"), str)):
            raise ValueError(f"edits[{i}] must be a dict with string oldText and newText, got {edit!r}")
        pairs.append((edit["oldText"], edit["newText"]))
    return pairs


# --- argument preparation and validation (edit.js prepareEditArguments; pi-ai validateToolArguments) ---


def _reject_constant(name: str) -> Any:
    """JS `JSON.parse` has no NaN/Infinity literals; Python's json accepts them unless told not to."""
    raise ValueError(f"not JSON: {name}")


def _prepare(args: dict[str, Any]) -> dict[str, Any]:
    """pi `prepareEditArguments`: parse `edits` sent as a JSON array string; append a legacy
    top-level `oldText`/`newText` pair (both strings) to `edits` and drop those keys."""
    args = dict(args)
    if isinstance(args.get("edits"), str):
        try:
            parsed = json.loads(args["edits"], parse_constant=_reject_constant)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
    if not (isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str)):
        return args
    edits = list(args["edits"]) if isinstance(args.get("edits"), list) else []
    edits.append({"oldText": args["oldText"], "newText": args["newText"]})
    rest = {k: v for k, v in args.items() if k not in ("oldText", "newText", "edits")}
    # JS `{...rest, edits}`: keys keep their order, `edits` goes last unless it was already present.
    if "edits" in args:
        return {k: (edits if k == "edits" else v) for k, v in args.items() if k not in ("oldText", "newText")}
    return {**rest, "edits": edits}


def _convert_string(value: Any) -> Any:
    """TypeBox 1.3 `Value.Convert` to String: numbers/booleans via JS `toString`, null -> "null"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number_str(value)
    return value


def _convert(args: dict[str, Any]) -> dict[str, Any]:
    """TypeBox `Value.Convert` against the edit schema (a deep copy; unknown keys untouched).

    A non-array `edits` becomes a one-element array (so a single `{oldText, newText}` object is
    accepted in 0.84.1, observed against the shipped package).
    """
    out = dict(args)
    if "path" in out:
        out["path"] = _convert_string(out["path"])
    if "edits" in out:
        items = out["edits"] if isinstance(out["edits"], list) else [out["edits"]]
        converted = []
        for item in items:
            if isinstance(item, dict):
                item = dict(item)
                for key in ("oldText", "newText"):
                    if key in item:
                        item[key] = _convert_string(item[key])
            converted.append(item)
        out["edits"] = converted
    return out


def _required_error(prefix: str, obj: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    missing = [k for k in keys if k not in obj]
    if not missing:
        return []
    return [f"  - {prefix}{missing[0]}: must have required properties {', '.join(missing)}"]


def _validation_errors(args: dict[str, Any]) -> list[str]:
    errors = _required_error("", args, ("path", "edits"))
    if "path" in args and not isinstance(args["path"], str):
        errors.append("  - path: must be string")
    for i, item in enumerate(args.get("edits", [])):
        if not isinstance(item, dict):
            errors.append(f"  - edits.{i}: must be object")
            continue
        errors.extend(_required_error(f"edits.{i}.", item, ("oldText", "newText")))
        for key in ("oldText", "newText"):
            if key in item and not isinstance(item[key], str):
                errors.append(f"  - edits.{i}.{key}: must be string")
    return errors


def normalize_edit_args(args: dict[str, Any]) -> EditArgs:
    """Prepare and validate raw edit arguments exactly as pi 0.84.1 does before `execute`.

    Accepts `edits` as an array, as a JSON string holding an array, or (via TypeBox conversion)
    as a single object; legacy top-level `oldText`/`newText` strings are appended as the last
    edit. Numbers, booleans and null in string fields are converted to their JS strings.

    Args:
        args: the tool-call arguments as the model sent them (JSON-decoded).

    Returns:
        EditArgs(path, edits).

    Raises:
        PiEditError: pi's text, either `Validation failed for tool "edit":\\n  - ...\\n\\nReceived
            arguments:\\n{JSON}` or `Edit tool input is invalid. edits must contain at least one
            replacement.` for an empty `edits`.
        TypeError: if `args` is not a dict.
    """
    if not isinstance(args, dict):
        raise TypeError(f"edit arguments must be a dict, got {args!r}")
    prepared = _prepare(args)
    converted = _convert(prepared)
    errors = _validation_errors(converted)
    if errors:
        raise PiEditError(
            'Validation failed for tool "edit":\n' + "\n".join(errors) + "\n\nReceived arguments:\n" + js_json_stringify(prepared)
        )
    if not converted["edits"]:
        raise PiEditError("Edit tool input is invalid. edits must contain at least one replacement.")
    return EditArgs(converted["path"], tuple((e["oldText"], e["newText"]) for e in converted["edits"]))
