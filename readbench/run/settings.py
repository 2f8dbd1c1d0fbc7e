"""How a matrix reaches and bounds its models: inspect's own knobs, with safe defaults for real
models (GitHub issue 18, items 1, 8, 9).

A real model on a dead port, a server answering HTTP 500 or a runaway generation must end
within bounds with a named reason. inspect already has every bound; readbench only sets them:

- ``time_limit`` (seconds per sample, inspect's sample time limit: the sample ends with
  ``limit = time``, ``stop_reason = time_limit``);
- ``generate``: inspect's `GenerateConfig` -- ``max_retries`` (retries per model call),
  ``timeout`` (seconds per model call, retries included), ``attempt_timeout`` (seconds per
  attempt), ``max_tokens`` (tokens per reply), ``max_connections`` (concurrent calls per
  model), ``temperature``, ``seed``;
- ``model``: ``base_url``, ``args`` (inspect's ``model_args``, ``-M``), and what the server is
  (``server``, ``chat_template``: recorded, as the run's provenance);
- ``max_tasks`` (arms run at once) and ``retry_attempts`` (eval_set's retries of a failed arm);
- ``log_realtime``: off when every model is the simulated agent (`SIM_LOG_REALTIME`), inspect's
  default (on) otherwise.

Without any setting, inspect retries a failing call for ever and a sample has no time limit,
so for a model that is not readbench's simulated agent the defaults are `REAL_DEFAULTS`; for
a local server (a loopback base URL, or a local provider such as ``ollama``) also
`LOCAL_DEFAULTS`: one connection and one arm at a time, because a single-slot server that
interleaves two arms' prompts recomputes its prefix cache on every call (issue 18: 28 calls in
8 min interleaved vs 45 in 3.5 min serially). A simulated-only matrix keeps inspect's defaults
(and the logs of runs made before these settings existed resume unchanged).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from readbench.sim import is_simulated

__all__ = ["GENERATE_BOUNDS", "LOCAL_DEFAULTS", "REAL_DEFAULTS", "SETTING_BOUNDS", "SIM_LOG_REALTIME", "RunSettings",
           "base_url_of", "check_settings", "is_local", "probe_server", "resolve_settings"]

GENERATE_BOUNDS: dict[str, tuple[int, int, str]] = {
    "max_retries": (0, 100, "retries per model call"),
    "timeout": (1, 86_400, "seconds per model call, retries included"),
    "attempt_timeout": (1, 86_400, "seconds per attempt of a model call"),
    "max_tokens": (1, 1_000_000, "tokens per reply"),
    "max_connections": (1, 1_000, "concurrent calls per model"),
}
"""The `generate:` keys readbench bounds (inclusive integer range, unit); ``temperature``
(0-2) and ``seed`` (an integer) are also accepted."""
SETTING_BOUNDS: dict[str, tuple[int, int, str]] = {
    "time_limit": (1, 604_800, "seconds per sample"),
    "max_tasks": (1, 1_000, "arms at once"),
    "retry_attempts": (0, 10, "eval_set retries of an arm that failed"),
}
"""Top-level matrix settings (and flags of `readbench eval`)."""
REAL_DEFAULTS: dict[str, int] = {"time_limit": 1800, "max_retries": 3, "timeout": 600, "attempt_timeout": 300,
                                 "max_tokens": 4096}
"""Defaults when a model is not the simulated agent: a 30 min sample, 3 retries of a call within
10 min, 5 min per attempt, 4,096 tokens per reply."""
LOCAL_DEFAULTS: dict[str, int] = {"max_connections": 1, "max_tasks": 1}
"""Further defaults for a local server (one slot: one call and one arm at a time)."""
SIM_LOG_REALTIME = False
"""eval_set's ``log_realtime`` when every model is simulated (GitHub issue 26 item 2). inspect's
realtime log writes every event of a running sample into a per-eval sample buffer (SQLite), which
is what lets ``inspect view`` show unfinished samples and ``inspect log recover`` rebuild the
samples of a crashed log. On the simulated agent that bookkeeping was 7-10 % of the run's own
process (the independent nightly subset, 56 samples, two alternating pairs on a loaded machine:
106.3 and 104.6 against 99.0 and 94.5 CPU s, tables equal), 0.13-0.18 CPU s per sample, and what
it protects costs nothing to redo: a crashed simulated run is re-run (eval_set still resumes from
the finished samples its log holds; ``log_realtime`` is no part of inspect's task identifier, so
logs written either way resume). Runs with a real model keep it on."""
DEFAULT_MAX_TASKS = 2
DEFAULT_RETRY_ATTEMPTS = 2
_LOCAL_PROVIDERS = ("ollama", "vllm", "sglang", "llama-cpp-python", "lmstudio", "transformer_lens", "hf")
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
_MODEL_KEYS = {"base_url", "args", "server", "chat_template"}


def base_url_of(model: str, base_url: str | None = None) -> str | None:
    """The base URL a model is reached at: `base_url` if given, else the provider's environment
    variable as inspect reads it (``openai-api/<service>/...`` -> ``<SERVICE>_BASE_URL``; the
    provider's own ``<PROVIDER>_BASE_URL`` otherwise); None when neither is set."""
    if base_url:
        return base_url
    parts = model.split("/")
    service = parts[1] if parts[0] in ("openai-api", "openai-api-completions") and len(parts) > 2 else parts[0]
    return os.environ.get(f"{service.upper().replace('-', '_')}_BASE_URL") or None


def is_local(model: str, base_url: str | None = None) -> bool:
    """True for a model served on this machine: a loopback base URL or a local provider."""
    url = base_url_of(model, base_url)
    if url:
        return (urlparse(url).hostname or "") in _LOOPBACK
    return model.split("/")[0] in _LOCAL_PROVIDERS


def _int_in(value: Any, key: str, bounds: tuple[int, int, str], where: str) -> int:
    low, high, unit = bounds
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{where}{key} must be an integer from {low} to {high} ({unit}), got {value!r}")
    return value


def check_settings(settings: dict[str, Any], generate: dict[str, Any], model: dict[str, Any], where: str = "") -> None:
    """Validate the top-level settings, the ``generate:`` and the ``model:`` sections.

    Raises:
        ValueError: an unknown key or a value of the wrong type or out of bounds; the message
            starts with `where` and names the key and the value.
    """
    for key, value in settings.items():
        if value is not None:
            _int_in(value, key, SETTING_BOUNDS[key], where)
    for key, value in generate.items():
        if key in GENERATE_BOUNDS:
            _int_in(value, key, GENERATE_BOUNDS[key], f"{where}generate.")
        elif key == "temperature":
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 2:
                raise ValueError(f"{where}generate.temperature must be a number from 0 to 2, got {value!r}")
        elif key == "seed":
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{where}generate.seed must be an integer, got {value!r}")
        else:
            raise ValueError(f"{where}generate: unknown key {key!r}; allowed: "
                             f"{sorted(set(GENERATE_BOUNDS) | {'temperature', 'seed'})}")
    unknown = set(model) - _MODEL_KEYS
    if unknown:
        raise ValueError(f"{where}model: unknown key(s) {sorted(unknown)}; allowed: {sorted(_MODEL_KEYS)}")
    if not isinstance(model.get("args") or {}, dict):
        raise ValueError(f"{where}model.args must be a mapping (inspect's model_args), got {model['args']!r}")
    for key in ("base_url", "server", "chat_template"):
        if model.get(key) is not None and (not isinstance(model[key], str) or not model[key].strip()):
            raise ValueError(f"{where}model.{key} must be a non-empty string, got {model[key]!r}")
    url = model.get("base_url")
    if url and urlparse(url).scheme not in ("http", "https"):
        raise ValueError(f"{where}model.base_url must be an http(s) URL, got {url!r}")


@dataclass(frozen=True)
class RunSettings:
    """The resolved knobs of one run (what eval_set gets, and what run.json records)."""

    time_limit: int | None
    """Seconds per sample (None: no limit)."""
    max_tasks: int
    """Arms run at once."""
    retry_attempts: int
    """eval_set's retries of an arm that failed."""
    generate: dict[str, Any] = field(default_factory=dict)
    """inspect GenerateConfig fields (max_retries, timeout, attempt_timeout, max_tokens, ...)."""
    model_args: dict[str, Any] = field(default_factory=dict)
    """inspect's model_args."""
    model_base_url: str | None = None
    """Base URL for every model (None: each provider's environment variable)."""
    defaults: tuple[str, ...] = ()
    """Keys filled from `REAL_DEFAULTS` / `LOCAL_DEFAULTS` (the user set none of them)."""
    log_realtime: bool | None = None
    """eval_set's ``log_realtime`` (None: inspect's default, on); `SIM_LOG_REALTIME` for a
    simulated-only run."""

    def eval_set_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `inspect_ai.eval_set` (generate config fields included)."""
        out: dict[str, Any] = {"max_tasks": self.max_tasks, "retry_attempts": self.retry_attempts, **self.generate}
        if self.time_limit is not None:
            out["time_limit"] = self.time_limit
        if self.model_args:
            out["model_args"] = dict(self.model_args)
        if self.model_base_url:
            out["model_base_url"] = self.model_base_url
        if self.log_realtime is not None:
            out["log_realtime"] = self.log_realtime
        return out

    def record(self) -> dict[str, Any]:
        """The settings as run.json and every log's metadata record them."""
        return {"time_limit": self.time_limit, "max_tasks": self.max_tasks, "retry_attempts": self.retry_attempts,
                "generate": dict(self.generate), "model_args": dict(self.model_args),
                "model_base_url": self.model_base_url, "defaults": list(self.defaults)}


def resolve_settings(models: list[str], settings: dict[str, Any], generate: dict[str, Any],
                     model: dict[str, Any]) -> RunSettings:
    """Fill what the user did not set: `REAL_DEFAULTS` when a model is not simulated,
    `LOCAL_DEFAULTS` too when one is served locally (module docstring).

    Args:
        models: the run's inspect model strings.
        settings: time_limit, max_tasks, retry_attempts as given (None = not given).
        generate: the ``generate:`` section merged with the flags.
        model: the ``model:`` section merged with the flags.

    Raises:
        ValueError: as `check_settings`.
    """
    check_settings(settings, generate, model)
    gen = dict(generate)
    given = {k: v for k, v in settings.items() if v is not None}
    filled: list[str] = []
    real = [m for m in models if not is_simulated(m)]
    defaults: dict[str, int] = {}
    if real:
        defaults.update(REAL_DEFAULTS)
        if any(is_local(m, model.get("base_url")) for m in real):
            defaults.update(LOCAL_DEFAULTS)
    for key, value in defaults.items():
        if key in SETTING_BOUNDS and key not in given:
            given[key] = value
            filled.append(key)
        elif key in GENERATE_BOUNDS and key not in gen:
            gen[key] = value
            filled.append(key)
    return RunSettings(time_limit=given.get("time_limit"), max_tasks=given.get("max_tasks", DEFAULT_MAX_TASKS),
                       retry_attempts=given.get("retry_attempts", DEFAULT_RETRY_ATTEMPTS), generate=gen,
                       model_args=dict(model.get("args") or {}), model_base_url=model.get("base_url"),
                       defaults=tuple(filled), log_realtime=None if real else SIM_LOG_REALTIME)


def probe_server(model: str, base_url: str | None = None, timeout_seconds: float = 3.0) -> dict[str, Any]:
    """What a local OpenAI-compatible server says about itself, for the run's provenance: its
    HTTP ``Server`` header and the model ids ``GET <base_url>/models`` lists. Only loopback
    servers are asked; {} for anything else or when the server does not answer in time."""
    url = base_url_of(model, base_url)
    if not url or (urlparse(url).hostname or "") not in _LOOPBACK:
        return {}
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/models", timeout=timeout_seconds) as resp:  # noqa: S310
            body = json.loads(resp.read() or b"{}")
            ids = [str(m.get("id")) for m in body.get("data", []) if isinstance(m, dict)]
            return {"server_header": resp.headers.get("Server", ""), "served_models": ids}
    except (OSError, ValueError, urllib.error.URLError) as ex:
        return {"probe_error": f"{type(ex).__name__}: {ex}"[:200]}
