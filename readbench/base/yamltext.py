"""YAML from users (matrix files, `-T KEY=VALUE` values) loaded with a bound on its expanded size.

`yaml.safe_load` builds aliases by reference, so a nine-level "billion laughs" file of 300 bytes
loads in milliseconds, but anything that walks or prints the result (validation, an error
message's `repr`) expands it: a 225 MB error message and 46 s in one probe (GitHub issue 27).
A readbench matrix or task argument is a short list of names and numbers, so the loaded value is
refused, with the input named, once it holds more than `MAX_VALUES` scalars and containers.
A key given twice in one mapping (two `variants:` lines) is refused too: `yaml.safe_load` keeps
the last one silently, so the first list never ran and nothing said so (brk13).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_VALUES", "load_bounded"]

MAX_VALUES = 100_000
"""At most this many scalars and containers in one loaded document (the weekly matrix has < 200)."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a mapping key given twice (merge keys `<<` may be overridden)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the base constructor reports it
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found duplicate key {key!r} (only the last one would count)", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def load_bounded(text: str, where: str, max_values: int = MAX_VALUES) -> Any:
    """`yaml.safe_load(text)` without duplicate keys, refused when its value expands to more than `max_values` nodes.

    Args:
        text: the YAML document.
        where: names the input in the error (a path, or `-T key`).
        max_values: the bound on scalars plus containers, counting every alias expansion.

    Raises:
        yaml.YAMLError: the text is not valid YAML (as `yaml.safe_load`), or a mapping repeats a key
            (`found duplicate key 'variants' (only the last one would count)`).
        ValueError: `"{where}: the YAML expands to more than {max_values} values (nested
            aliases?); ..."`, found after visiting at most `max_values + 1` nodes.
    """
    value = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    stack, seen = [value], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > max_values:
            raise ValueError(
                f"{where}: the YAML expands to more than {max_values} values (nested aliases?); "
                "a matrix or task argument is a short list of names and numbers"
            )
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return value
