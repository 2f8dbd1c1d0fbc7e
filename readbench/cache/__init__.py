"""readbench.cache: offline tokenizer, provider prompt-cache simulator, dated prices.

docs/specs/caching.md (rules, prices, simulator design), metrics.md (the per-sample scalars).

- `count_tokens(text, family)`: offline token counts (tokenizer.py).
- `CallRecord` -> `Request` (adapter.py, blocks.py) -> `simulate(requests, cache_model, model)`
  -> `SimulationResult` (simulate.py), cache models in policies/ behind registry.py.
- `sample_cache_metrics(calls, cache_models, unpruned_calls=...)` (metrics.py).
- prices.csv / models.csv: dated data (prices.py).

Importing this package loads neither the vocabulary nor the price tables (both are lazy), nor
the adapter, which pulls in inspect_ai's message types (`CallRecord`, `RequestBuilder`,
`calls_to_requests`, `sample_cache_metrics` are imported on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from readbench.base.lazy import lazy_attributes
from readbench.cache.blocks import Block, Request
from readbench.cache.prices import get_model_spec, get_price
from readbench.cache.registry import CACHE_MODELS, CacheModel
from readbench.cache.simulate import RequestUsage, SimulationResult, simulate
from readbench.cache.tokenizer import count_tokens

if TYPE_CHECKING:
    from readbench.cache.adapter import CallRecord, RequestBuilder, calls_to_requests
    from readbench.cache.metrics import sample_cache_metrics

# imported on first use (PEP 562): the adapter imports inspect_ai (~2 s), which `readbench cache
# --help` and the simulator do not need (readbench/cli.py)
_LAZY = {"CallRecord": "readbench.cache.adapter", "RequestBuilder": "readbench.cache.adapter",
         "calls_to_requests": "readbench.cache.adapter", "sample_cache_metrics": "readbench.cache.metrics"}

__getattr__ = lazy_attributes(__name__, _LAZY, globals())


__all__ = [
    "CACHE_MODELS",
    "Block",
    "CacheModel",
    "CallRecord",
    "Request",
    "RequestBuilder",
    "RequestUsage",
    "SimulationResult",
    "calls_to_requests",
    "count_tokens",
    "get_model_spec",
    "get_price",
    "sample_cache_metrics",
    "simulate",
]
