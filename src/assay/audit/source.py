"""Where a scan looks vulnerabilities up: the seam between `assay.audit` and its data.

`VulnerabilitySource` has two implementations: `StoreSource` over an open store (the
same `cpeName` search the server answers with, `assay.audit.store_source`) and
`ApiSource` over an NVD API 2.0 (NVD itself or an assay server, through assay's own
`NvdClient`, `assay.audit.api_source`). Records are NVD CVE objects (JSON, decoded).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import orjson

from assay.audit.model import SourceStatus
from assay.nvd.cpe import Cpe

__all__ = ["DictionaryProduct", "Found", "Lookup", "RecordCache", "VulnerabilitySource"]

Record = Mapping[str, Any]
PRODUCT_SAMPLE: Final = 200
"""How many records a product-name look-up reads to learn the vendors that use a name."""


@dataclass(frozen=True, slots=True)
class DictionaryProduct:
    """A product of the CPE dictionary with its reference links."""

    cpe: Cpe
    refs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Lookup:
    """One look-up of a scan, by a CPE name."""

    name: Cpe
    product_wide: bool = False
    """False: the records whose vulnerable criteria the name hits (`affecting`); True:
    every record with a criteria for the name's part, vendor and product (`of_product`)."""


Found = tuple[bytes, tuple[int, ...]]
"""A record (NVD-encoded JSON) and the indexes of the look-ups that found it."""


class VulnerabilitySource(Protocol):
    def status(self) -> SourceStatus:
        """The data's generation, last sync and size."""
        ...

    def affecting(self, name: Cpe) -> Sequence[Record]:
        """Records whose vulnerable criteria `name` hits (`cpeName` with `isVulnerable`)."""
        ...

    def of_product(self, part: str, vendor: str, product: str) -> Sequence[Record]:
        """Records with a criteria for the product, any version (`virtualMatchString`)."""
        ...

    def find(
        self, lookups: Sequence[Lookup], progress: Callable[[int], None] | None = None
    ) -> Iterator[Found]:
        """Every record some of `lookups` finds, once, with the look-ups that found it:
        the answers of `affecting` and `of_product` for all of them, gathered in as few
        requests as the source allows. `progress` is told how many look-ups are done
        where the source can say."""
        ...

    def products_with_reference(self, url: str) -> Sequence[DictionaryProduct]:
        """Dictionary products whose titles or reference links contain the words of
        `url` as one phrase (`keywordSearch` + `keywordExactMatch` of the CPE API)."""
        ...

    def vendors_of(self, product: str) -> Sequence[tuple[str, str]]:
        """(part, vendor) pairs that name a product `product`, from the dictionary and
        from the criteria of CVE configurations."""
        ...

    def close(self) -> None: ...


class RecordCache:
    """Decoded records by CVE id, the most recently used kept (bounded memory)."""

    def __init__(self, size: int = 8192) -> None:
        self._size = size
        self._items: OrderedDict[bytes, Record] = OrderedDict()

    def decode(self, raw: bytes) -> Record:
        key = _record_id(raw)
        if key is not None:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        record: Record = orjson.loads(raw)
        if key is not None:
            self._items[key] = record
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        return record


def _record_id(raw: bytes) -> bytes | None:
    # NVD-encoded records start with their id (`{"id":"CVE-2024-1234",...`).
    head = raw[:48]
    start = head.find(b'"id":"')
    if start < 0:
        return None
    end = head.find(b'"', start + 6)
    return head[start + 6 : end] if end > 0 else None
