"""YAML records read safely: PyYAML's C safe loader, with the node graph checked before
anything is built (aliases, merge keys, repeated keys and deep nesting refused) and times
kept as text. Private to `assay.osv.record`, imported only when a record is YAML."""

from __future__ import annotations

from typing import Any, ClassVar

import yaml


class _NoAliasLoader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """YAML's safe loader that refuses aliases, repeated keys and deep nesting before
    building anything (the node graph is walked first)."""

    # Times stay text, as in JSON: YAML 1.1 would make `2021-07-30T22:15:00Z` a datetime.
    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = {
        first: [
            (tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    max_depth = 0  # (set by `load`)

    def construct_document(self, node: yaml.Node) -> Any:
        _check_nodes(node, self.max_depth)
        return super().construct_document(node)


class YamlProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _check_nodes(root: yaml.Node, max_depth: int) -> None:
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise YamlProblem(
                node.start_mark.line + 1,
                "expected no YAML aliases (`*name`), found one to the value here",
            )
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            if depth > max_depth:
                raise YamlProblem(
                    node.start_mark.line + 1, f"expected nesting at most {max_depth} deep"
                )
            stack.extend((child, depth + 1) for child in reversed(_children(node)))


def _children(node: yaml.MappingNode | yaml.SequenceNode) -> list[yaml.Node]:
    """A collection's nodes in document order (a mapping's keys and values, its keys
    checked)."""
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    _check_keys(node)
    return [item for pair in node.value for item in pair]


def _check_keys(node: yaml.MappingNode) -> None:
    """No merge key, and no key twice."""
    keys: set[str] = set()
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        if key.value == "<<":
            raise YamlProblem(key.start_mark.line + 1, "expected no YAML merge keys (`<<`)")
        if key.value in keys:
            raise YamlProblem(
                key.start_mark.line + 1, f"expected each key once, found {key.value!r} twice"
            )
        keys.add(key.value)


def load(data: bytes, max_depth: int) -> Any:
    """The YAML document in `data`; `YamlProblem` (with its line) for what is refused,
    nesting deeper than `max_depth` included."""
    loader = _NoAliasLoader(data)
    loader.max_depth = max_depth
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
