"""inspect-ai eval logs (`.eval` archives and `.json` logs), readbench's own included
(sessions.md §4, inspect-notes.md).

One session per sample and epoch, read one sample at a time with inspect's own
`read_eval_log_samples` (attachments resolved). Every `ModelEvent` is one call: `input` is the
request as sent (for readbench's logs, the DCP projection), `tools` the tool definitions,
`timestamp`/`completed` the start and end (readbench's simulated agent records simulated times in
the output's metadata: `sim_ts_start_seconds`, `sim_ts_first_token_seconds`, `sim_ts_end_seconds`,
used instead).

Usage (`ModelUsage`, `native_usage`): inspect 0.3.285's providers report `input_tokens` as the
uncached part, with cache read and write in their own fields (`anthropic.py`; `_openai.py`
`prompt_tokens - cached_tokens - cache_write_tokens`; `_openai_responses.py`; `google.py`), so
`total_tokens = input + cache read + cache write + output`. Logs of older inspect versions (and
some providers) put the cached part inside `input_tokens` instead, so `total_tokens = input +
output`; `total_tokens` tells the two apart, whatever the provider.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readbench.sessions._build import SessionBuilder
from readbench.sessions._types import BilledUsage, ImportIssues, Session, SessionFormat

__all__ = ["FORMATS", "load", "native_usage"]



def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


def native_usage(usage: Any) -> BilledUsage | None:
    """What the provider reported for one call (an inspect `ModelUsage`), as billed tokens.

    `input_tokens` is the uncached part when `total_tokens` counts the cache read and write
    beside it (inspect >= 0.3.285, every provider), and includes them otherwise (module
    docstring). Shared by the session importer and the agent loop's native usage
    (docs/specs/metrics.md "Prompt cache and cost": `native_*`).

    Returns:
        The usage (tokens), or None when `usage` is None or holds negative counts.
    """
    if usage is None:
        return None
    read = int(usage.input_tokens_cache_read or 0)
    write = int(usage.input_tokens_cache_write or 0)
    inp = int(usage.input_tokens or 0)
    out = int(usage.output_tokens or 0)
    total = int(usage.total_tokens or 0)
    cached_inside = (read or write) and total == inp + out and inp >= read + write
    uncached = inp - read - write if cached_inside else inp
    try:
        return BilledUsage(uncached_input_tokens=uncached, cache_read_tokens=read, cache_write_tokens=write,
                           output_tokens=out,
                           reasoning_tokens=int(usage.reasoning_tokens) if usage.reasoning_tokens is not None else None)
    except ValueError:
        return None


def _params(config: Any) -> str:
    """The request settings that enter the cached prefix (thinking budget, reasoning effort)."""
    if config is None:
        return ""
    return f"effort={config.reasoning_effort};thinking={config.reasoning_tokens}"


def load(path: Path) -> list[Session]:
    """Import every sample of one inspect log as a session (module docstring).

    Raises:
        ValueError: the file is not a readable inspect log (naming `path`).
    """
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    try:
        header = read_eval_log(str(path), header_only=True)
    except Exception as exc:  # noqa: BLE001 - inspect raises many types for a bad archive
        raise ValueError(f"{path}: not a readable inspect log ({type(exc).__name__}: {str(exc)[:200]})") from None
    version = f"inspect-ai log v{header.version}"
    out: list[Session] = []
    try:
        samples = read_eval_log_samples(str(path), all_samples_required=False, resolve_attachments=True)
        for sample in samples:
            issues = ImportIssues()
            session = Session(str(path), "inspect", "inspect", version, f"{header.eval.task}:{sample.id}:{sample.epoch}",
                              issues=issues)
            b = SessionBuilder(session)
            previous: list[Any] = []
            for event in sample.events:
                if not isinstance(event, ModelEvent):
                    continue
                if event.input_refs is not None and not event.input:
                    issues.warn(f"{path}:{sample.id}", "a model event's input is condensed and could not be resolved")
                    continue
                msgs = list(event.input)
                # a request that extends the previous one shares its list (the usual agent loop)
                n = len(previous)
                if n and len(msgs) >= n and all(a.id == b_.id and a.id is not None for a, b_ in zip(previous, msgs)):
                    for m in msgs[n:]:
                        b.append(m)
                else:
                    b.reset(msgs)
                previous = msgs
                meta = (event.output.metadata or {}) if event.output else {}
                start = meta.get("sim_ts_start_seconds")
                first = meta.get("sim_ts_first_token_seconds")
                provider = _provider(event.model)
                msg = event.output.message if event.output and event.output.choices else None
                b.call(
                    model=event.model.split("/", 1)[-1], provider=provider or None,
                    ts_start_seconds=float(start) if start is not None else event.timestamp.timestamp(),
                    ts_first_token_seconds=float(first) if first is not None else None,
                    ts_end_seconds=(float(meta["sim_ts_end_seconds"]) if meta.get("sim_ts_end_seconds") is not None
                                    else None if start is not None or event.completed is None
                                    else event.completed.timestamp()),
                    usage=native_usage(event.output.usage if event.output else None), output=msg,
                    stop_reason=event.output.stop_reason if event.output else None,
                    tools=tuple(event.tools) if event.tools else None,
                    params=_params(event.config),
                )
            out.append(session)
    except Exception as exc:  # noqa: BLE001 - a truncated archive: keep the samples read so far
        if not out:
            raise ValueError(f"{path}: cannot read its samples ({type(exc).__name__}: {str(exc)[:200]})") from None
        out[-1].issues.warn(str(path), f"reading stopped early: {type(exc).__name__}: {str(exc)[:200]}")
    return out


def _sniff(head: bytes, objects: list[dict[str, Any]]) -> bool:
    if head.startswith(b"PK\x03\x04"):
        return b"header.json" in head or b"_journal" in head or b"samples/" in head
    if len(objects) == 1 and {"eval", "version"} <= set(objects[0]):
        return True  # a one-line JSON log
    return head.lstrip().startswith(b"{") and not objects and b'"eval"' in head[:65536] and b'"version"' in head[:65536]


FORMATS = [SessionFormat("inspect", "inspect", "inspect-ai eval logs (.eval archives and .json logs), readbench's own included",
                         _sniff, load)]
