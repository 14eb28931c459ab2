"""Reading fields of a parsed VEX document, each error naming the file and JSON path."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from assay._json_strict import member, type_name
from assay.vex.model import ProductId, ProductKind, VexError, VexStatus, parse_time

MAX_STATEMENTS: Final = 100_000
"""Statements (or CycloneDX vulnerabilities, CSAF vulnerabilities) per document at most."""
MAX_PRODUCTS: Final = 100_000
"""Products named by one statement, or in a CSAF product tree, at most."""


class Fields:
    """Typed access to a document's members for one file (`source`)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> VexError:
        return VexError(f"{self.source}: {path}", message)

    def require_reason(
        self, status: VexStatus, reasons: tuple[str | None, ...], path: str, message: str
    ) -> None:
        """A not_affected statement says why (one of `reasons` given), else refused."""
        if status is VexStatus.NOT_AFFECTED and all(reason is None for reason in reasons):
            raise self.fail(path, message)

    def mapping(self, value: object, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected an object, found {type_name(value)}")
        return value

    def array(self, value: object, path: str, limit: int = MAX_STATEMENTS) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array, found {type_name(value)}")
        if len(value) > limit:
            raise self.fail(path, f"expected at most {limit} items, found {len(value)}")
        return value

    def string(self, data: Mapping[str, Any], key: str, path: str) -> str | None:
        """The member `key` as a string (`None` when absent, null or empty)."""
        value = data.get(key)
        if value in (None, ""):
            return None
        if not isinstance(value, str):
            raise self.fail(member(path, key), f"expected a string, found {type_name(value)}")
        return value

    def required(self, data: Mapping[str, Any], key: str, path: str) -> str:
        value = self.string(data, key, path)
        if value is None:
            raise self.fail(member(path, key), "expected a non-empty string, found none")
        return value

    def strings(self, data: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        items = self.array(data.get(key), member(path, key), MAX_PRODUCTS)
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise self.fail(
                    member(member(path, key), index), f"expected a string, found {type_name(item)}"
                )
        return tuple(items)

    def time(self, data: Mapping[str, Any], key: str, path: str) -> datetime | None:
        """The member `key` as an RFC 3339 time (`None` when absent, null or empty)."""
        return parse_time(data.get(key), f"{self.source}: {member(path, key)}")

    def one_of(self, text: str, allowed: Collection[str], path: str) -> str:
        """`text` when it is one of the `allowed` words, else an error listing them."""
        if text not in allowed:
            raise self.fail(path, f"expected one of {', '.join(allowed)}, found {text!r}")
        return text

    def names(
        self, data: Mapping[str, Any], path: str, kinds: Mapping[str, ProductKind]
    ) -> list[ProductId]:
        """The product names in the members of `kinds` (member -> `ProductId.kind`)."""
        found = ((self.string(data, key, path), kind) for key, kind in kinds.items())
        return [ProductId(kind, text) for text, kind in found if text is not None]


def product_id(text: str) -> ProductId:
    """A product named by text: a purl (`pkg:`), a CPE name (`cpe:`) or a reference."""
    lowered = text[:4].lower()
    if lowered == "pkg:":
        return ProductId("purl", text)
    if lowered == "cpe:":
        return ProductId("cpe", text)
    return ProductId("ref", text)


@dataclass(frozen=True, slots=True)
class Origin:
    """What a document says of itself that each of its statements carries."""

    doc_id: str
    author: str | None
    time: datetime | None

    def facts(self, spec_version: str) -> dict[str, Any]:
        """The document's facts as the readers give them (`id`, `author`, `timestamp`,
        `specVersion`)."""
        return {
            "id": self.doc_id,
            "author": self.author,
            "timestamp": self.time,
            "specVersion": spec_version,
        }
