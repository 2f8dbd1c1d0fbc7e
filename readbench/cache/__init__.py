"""readbench.cache: offline tokenizer, provider prompt-cache simulator, dated prices.

docs/specs/caching.md (rules, prices, simulator design), metrics.md (the per-sample scalars).

- `count_tokens(text, family)`: offline token counts (tokenizer.py).
- `CallRecord` -> `Request` (adapter.py, blocks.py) -> `simulate(requests, cache_model, model)`
  -> `SimulationResult` (simulate.py), cache models in policies/ behind registry.py.
- `sample_cache_metrics(calls, cache_models, unpruned_calls=...)` (metrics.py).
- prices.csv / models.csv: dated data (prices.py).

Importing this package loads neither the vocabulary nor the price tables (both are lazy);
the adapter pulls in inspect_ai's message types.
"""

from readbench.cache.adapter import CallRecord, RequestBuilder, calls_to_requests
from readbench.cache.blocks import Block, Request
from readbench.cache.metrics import sample_cache_metrics
from readbench.cache.prices import get_model_spec, get_price
from readbench.cache.registry import CACHE_MODELS, CacheModel
from readbench.cache.simulate import RequestUsage, SimulationResult, simulate
from readbench.cache.tokenizer import count_tokens

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
