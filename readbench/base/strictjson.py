"""Values made fit for strict JSON: NaN and infinities become null (JSON has neither; a bare `NaN`
breaks `JSON.parse`), as the parquet tables hold them."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["finite"]


def finite(obj: Any) -> Any:
    """`obj` with every NaN or infinite float replaced by None, through dicts, lists and tuples
    (tuples become lists, as `json.dumps` writes them)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj
