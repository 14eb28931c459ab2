"""The one YAML reader for documents a verdict depends on (policies, ignore files).

YAML's anchors and aliases let a 1 KB document stand for billions of nodes ("billion
laughs"), and its composer recurses once per level of nesting. This reader bounds both
as the document is composed, before anything walks it, and refuses, naming the line and
column (1-based) of the first offence:

- more than `max_nodes` nodes once aliases are expanded (each anchored node's expanded
  size is counted once, so the count costs no more than the document);
- an alias inside the node it names (a recursive document);
- nesting deeper than `max_depth`, aliases expanded;
- a mapping key given twice (YAML forbids it; parsers differ on which one wins);
- anything YAML's safe loader refuses (no Python objects are ever built).

Errors are `InputError`s whose `where` is `SOURCE line L column C`. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

import yaml
from yaml.events import AliasEvent, CollectionStartEvent
from yaml.nodes import MappingNode, Node

from assay.errors import InputError

DEFAULT_MAX_DEPTH: Final = 64
DEFAULT_MAX_NODES: Final = 200_000
"""Nodes of a document with its aliases expanded (a 1 MB policy of plain YAML has fewer)."""


class _Refused(Exception):
    def __init__(self, reason: str, mark: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.mark = mark


class _Loader(yaml.SafeLoader):
    """The safe loader, composing trees of bounded expanded size and depth."""

    def __init__(self, stream: bytes | str, max_depth: int, max_nodes: int) -> None:
        super().__init__(stream)
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.depth = 0
        self.sizes: dict[int, tuple[int, int]] = {}
        """id(node) -> (nodes, height) of each composed node, aliases expanded."""

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, AliasEvent):
            return self._compose_alias(parent, index, event)
        # A collection is one level deeper; at a scalar the depth is one its collection
        # already passed, so the check below only ever refuses a collection.
        step = int(isinstance(event, CollectionStartEvent))
        self.depth += step
        if self.depth > self.max_depth:
            raise _Refused(
                f"expected nesting at most {self.max_depth} deep, found more",
                event.start_mark,
            )
        try:
            node = super().compose_node(parent, index)
            assert node is not None  # a node event was peeked
        finally:
            self.depth -= step
        self.sizes[id(node)] = self._measure(node)
        self._bound(node, event.start_mark)
        return node

    def _compose_alias(self, parent: Node | None, index: Any, event: AliasEvent) -> Node:
        """The node an alias names, refused when the alias is inside it or it is too big."""
        aliased = super().compose_node(parent, index)
        assert aliased is not None  # an alias names a composed node
        if id(aliased) not in self.sizes:
            raise _Refused(
                f"expected no alias inside the node it names (*{event.anchor})",
                event.start_mark,
            )
        self._bound(aliased, event.start_mark, alias=event.anchor)
        return aliased

    def _measure(self, node: Node) -> tuple[int, int]:
        if isinstance(node, MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node.value, list):
            children = node.value
        else:
            return 1, 0
        measured = [self.sizes[id(child)] for child in children]
        return 1 + sum(m[0] for m in measured), 1 + max((m[1] for m in measured), default=0)

    def _bound(self, node: Node, mark: Any, alias: str | None = None) -> None:
        nodes, height = self.sizes[id(node)]
        expanded = f" (alias *{alias})" if alias else ""
        if nodes > self.max_nodes:
            raise _Refused(
                f"expected at most {self.max_nodes} nodes with aliases expanded, "
                f"found more{expanded}",
                mark,
            )
        if self.depth + height > self.max_depth:
            raise _Refused(
                f"expected nesting at most {self.max_depth} deep with aliases expanded, "
                f"found more{expanded}",
                mark,
            )

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the safe loader refuses it below
            if repeated:
                raise _Refused(f"expected each key once, found {key!r} twice", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _where(source: str, mark: Any) -> str:
    if mark is None:
        return source
    return f"{source} line {mark.line + 1} column {mark.column + 1}"


def _not_yaml(error: yaml.YAMLError, source: str) -> InputError:
    """A YAML syntax error, at its position when the parser marked one."""
    if not isinstance(error, yaml.MarkedYAMLError):
        return InputError(source, f"expected YAML: {str(error).splitlines()[0]}")
    mark = error.problem_mark or error.context_mark
    problem = error.problem or error.context or "malformed"
    return InputError(_where(source, mark), f"expected YAML: {problem}")


def load(
    data: bytes | str,
    source: str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> Any:
    """The one YAML document in `data`, as plain values; `InputError` naming `source` and
    the position of the first problem otherwise."""
    loader: _Loader | None = None
    try:
        loader = _Loader(data, max_depth, max_nodes)  # decodes and checks the first bytes
        return loader.get_single_data()
    except _Refused as refused:
        raise InputError(_where(source, refused.mark), refused.reason) from None
    except yaml.YAMLError as error:
        raise _not_yaml(error, source) from None
    except RecursionError:  # not reached with a sane max_depth; never a traceback
        raise InputError(source, f"expected nesting at most {max_depth} deep") from None
    except UnicodeDecodeError as error:
        raise InputError(source, f"expected UTF-8 or UTF-16 YAML text: {error.reason}") from None
    finally:
        if loader is not None:
            loader.dispose()
