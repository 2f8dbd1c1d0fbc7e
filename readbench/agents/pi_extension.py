"""A read preset as the pi extension readbench writes from it (GitHub issue 24 item 2; agents.md §4).

pi's own `read` is the `stock` preset (pi-tools.md §1-2), so `stock` needs no extension. A preset
of the `paged` family that refuses an over-cap read (`over_cap="block"`, an error result: B and
presets derived from it, e.g. `{base: B, max_lines: 1500}`) is a `tool_call` hook: it selects the
requested lines as pi does (offset then limit), measures them against the preset's caps with
pi's `truncateHead` rule, and when a cap is hit blocks the call with the preset's own refusal text
(`readbench.read.notices.block_notice`, or B's line-too-long message) — pi turns a blocked call's
`reason` into the error result the model sees, verbatim. Within the caps pi's own read serves the
call, which is what B does there. Every number in the text comes from the preset's parameters.

Not expressed (named in the note): B's tool description (pi's built-in `read` keeps its own
description; a registered replacement tool would be needed), and readbench's read details
(the metrics take the read facts from pi's session instead).
"""

from __future__ import annotations

import json
from typing import Any

from readbench.read import get_variant

__all__ = ["pi_extension"]

_CORE = r"""import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";

const P = __PARAMS__;

function formatSize(n) {
  if (n < 1024) return `${n}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}KB`;
  return `${(n / (1024 * 1024)).toFixed(1)}MB`;
}
const size = (s) => Buffer.byteLength(s, "utf8");
function countLines(t) {
  if (!t) return 0;
  const n = t.split("\n").length;
  return t.endsWith("\n") ? n - 1 : n;
}
// pi's truncateHead: whole lines from the top within max_lines and max_bytes
function truncateHead(content) {
  const lines = content ? content.split("\n") : [];
  if (content && content.endsWith("\n")) lines.pop();
  const linesOk = P.max_lines === null || lines.length <= P.max_lines;
  const sizeOk = P.max_bytes === null || size(content) <= P.max_bytes;
  if (linesOk && sizeOk) return { truncated: false, firstLineExceeds: false, outputLines: lines.length };
  if (P.max_bytes !== null && size(lines[0]) > P.max_bytes) return { truncated: true, firstLineExceeds: true, outputLines: 0 };
  let kept = 0, bytes = 0;
  const cap = P.max_lines === null ? lines.length : Math.min(lines.length, P.max_lines);
  for (let i = 0; i < cap; i++) {
    const s = size(lines[i]) + (i > 0 ? 1 : 0);
    if (P.max_bytes !== null && bytes + s > P.max_bytes) break;
    kept += 1; bytes += s;
  }
  return { truncated: true, firstLineExceeds: false, outputLines: kept };
}
function capLabel() {
  const parts = [];
  if (P.max_lines !== null) parts.push(`${P.max_lines}-line`);
  if (P.max_bytes !== null) parts.push(formatSize(P.max_bytes));
  return parts.join("/");
}
function fittingRange(all, first, last) {
  if (first < 1 || first > last) return null;
  const want = Math.min(P.suggest_limit, last - first + 1);
  const t = truncateHead(all.slice(first - 1, first - 1 + want).join("\n"));
  const kept = t.truncated ? t.outputLines : want;
  return kept > 0 ? [first, kept] : null;
}
function lineTooLong(all, s, n, fileBytes, path) {
  const lineSize = formatSize(size(all[s - 1]));
  const head = `File has ${n} line${n !== 1 ? "s" : ""} (${formatSize(fileBytes)}); line ${s} alone is ${lineSize}, ` +
    `over the ${formatSize(P.max_bytes)} read limit.`;
  const sed = `sed -n '${s}p' ${path} | head -c ${P.max_bytes}`;
  const span = s < n ? fittingRange(all, s + 1, n) : fittingRange(all, 1, s - 1);
  if (span === null) return `${head} Use bash: ${sed}`;
  return `${head} Read other lines in ranges, e.g. offset=${span[0]} limit=${span[1]}, or this line with bash: ${sed}`;
}

// The preset's decision for one read: its refusal text, or null (the harness's own read serves it).
function decide(path, offset, limit, cwd) {
  if (typeof path !== "string") return null;
  const raw = path.startsWith("@") ? path.slice(1) : path;
  const expanded = raw === "~" ? homedir() : raw.startsWith("~/") ? homedir() + raw.slice(1) : raw;
  const absolute = isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
  let data;
  try { data = readFileSync(absolute); } catch { return null; }  // the harness's own read reports the error
  if (new RegExp(P.own, "i").test(absolute)) return null;  // images (and the like): the harness's own read
  const text = data.toString("utf8");
  const all = text.split("\n");
  const start0 = offset ? Math.max(0, offset - 1) : 0;
  if (start0 >= all.length) return null;  // beyond the end: the harness's own error
  const end0 = limit !== undefined && limit !== null ? Math.min(start0 + limit, all.length) : all.length;
  const t = truncateHead(all.slice(start0, end0).join("\n"));
  if (!t.truncated) return null;
  const n = countLines(text);
  if (t.firstLineExceeds) return lineTooLong(all, start0 + 1, n, data.length, path);
  const suggest = Math.min(P.suggest_limit, t.outputLines);
  return `File has ${n} lines (${formatSize(data.length)}), over the ${capLabel()} read ` +
    `limit. Read it in ranges, e.g. offset=${start0 + 1} limit=${suggest}, or grep for what you need first.`;
}
"""
"""The preset's read decision in JavaScript (pi's select and truncateHead, B's texts), shared by the
pi extension and the Claude Code hook; `P` holds the preset's caps."""

_PI = r"""// Written by readbench from read preset __NAME__ (readbench.agents.pi_extension). Do not edit.
__CORE__
export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "read") return;
    const { path, offset, limit } = event.input ?? {};
    const reason = decide(path, offset, limit, ctx.cwd);
    if (reason !== null) return { block: true, reason };
  });
}
"""


def blocking_preset(variant: Any, where: str) -> Any:
    """The read preset `variant` when a harness hook can express it: None for `stock`, else a
    `paged` preset with `over_cap="block"`, `as_error=True` and no `max_chars` (the pi extension
    and the Claude Code hook share this decision code).

    Raises:
        ValueError: any other preset: `read preset 'X' cannot be expressed as {where} expresses
            stock and paged presets that block over their caps)`.
    """
    v = get_variant(variant)
    if v.name == "stock":
        return None
    p = v.params
    if not (v.family == "paged" and p.get("over_cap") == "block" and p.get("as_error") is True
            and p.get("max_chars") is None):
        raise ValueError(f"read preset {v.name!r} cannot be expressed as {where} expresses stock and "
                         "paged presets that block over their caps)")
    return v


def pi_extension(variant: str | dict[str, Any]) -> str | None:
    """The pi extension (ES module source) expressing read preset `variant`, or None for `stock`
    (pi's own read is stock: no extension).

    Raises:
        ValueError: an unknown preset, or one pi cannot express (not `stock` and not a `paged`
            preset with `over_cap="block"`, `as_error=True` and no `max_chars`): the message names it.
    """
    v = blocking_preset(variant, "a pi extension (pi")
    if v is None:
        return None
    return _PI.replace("__CORE__", core_source(v)).replace("__NAME__", v.name)


PI_OWN = r"\.(jpe?g|png|gif|webp|bmp)$"
"""Files pi's own read serves whatever the preset (images: pi-tools.md §1)."""


def core_source(v: Any, own: str = PI_OWN) -> str:
    """`_CORE` with the caps of read variant `v` (a built `ReadVariant`); `own` is the regular
    expression of the paths the harness's own read serves whatever the preset."""
    p = v.params
    params = {"max_lines": p.get("max_lines"), "max_bytes": p.get("max_bytes"), "suggest_limit": p["suggest_limit"],
              "own": own}
    return _CORE.replace("__PARAMS__", json.dumps(params))
