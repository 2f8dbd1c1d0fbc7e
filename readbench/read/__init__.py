"""readbench.read: read-tool variants as pure functions of file bytes.

`get_variant("B")` (or a user preset dict) returns a `ReadVariant`; its `read(data, path,
offset, limit, call_id=…, session=…, visible_call_ids=…)` returns the `ReadResult` the model
receives, with structured `ReadDetails` for the metrics. Presets and their parameters:
`readbench variants` / `list_presets()`. Spec: docs/specs/variants.md, pi-tools.md §1-2.
Importing this package loads no tree-sitter and no tokenizer.
"""

from readbench.read._session import ReadRecord, ReadSession
from readbench.read._types import PI_READ_PARAMETERS, ReadDetails, ReadResult, ReadVariant
from readbench.read.registry import Preset, get_variant, list_presets, preset_names, register_preset

__all__ = [
    "PI_READ_PARAMETERS",
    "Preset",
    "ReadDetails",
    "ReadRecord",
    "ReadResult",
    "ReadSession",
    "ReadVariant",
    "get_variant",
    "list_presets",
    "preset_names",
    "register_preset",
]
