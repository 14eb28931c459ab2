"""Which statement speaks of a finding: by vulnerability id or alias, and by product.

Pure. A statement's purl matches a component's as OpenVEX defines: same type,
namespace and name; a version in the statement must equal the component's (none
matches every version); each qualifier (and a subpath) the statement gives must be the
component's too, while the component may have more. A CPE name matches when every
attribute the statement gives (not `*`) equals the component's. A `bom-ref` (or CSAF
product id) matches the component's ref exactly.

Of the statements that match, the newest wins (a statement's own time, else its
document's); at equal times, or without times, the one read last wins: documents given
later on the command line override earlier ones, as `vexctl merge` orders them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Final
from urllib.parse import unquote

from assay.vex.model import Assessment, ProductId, VexDocument, VexStatement

__all__ = ["ComponentNames", "Purl", "VexIndex", "cpe_matches", "parse_purl", "purl_matches"]

_LOWER_NAMES: Final = frozenset(
    {"pypi", "github", "bitbucket", "composer", "deb", "apk", "alpm", "oci", "hex"}
)
EARLIEST: Final = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Purl:
    type: str
    namespace: str
    name: str
    version: str | None
    qualifiers: frozenset[tuple[str, str]]
    subpath: str | None


def _decode(text: str) -> str:
    return unquote(text) if "%" in text else text


@lru_cache(maxsize=65536)
def parse_purl(text: str) -> Purl | None:
    """A package URL's parts, normalised for comparison; `None` if it is not one."""
    if text[:4].lower() != "pkg:":
        return None
    rest = text[4:].lstrip("/")
    rest, _, subpath = rest.partition("#")
    rest, _, query = rest.partition("?")
    path, version = _split_version(rest)
    parts = [_decode(p) for p in path.split("/") if p]
    if len(parts) < 2:
        return None
    kind = parts[0].lower()
    namespace, name = _normalised(kind, "/".join(parts[1:-1]), parts[-1])
    subpath = _decode(subpath).strip("/")
    return Purl(kind, namespace, name, version, _qualifiers(query), subpath or None)


def _split_version(rest: str) -> tuple[str, str | None]:
    """A purl's path and its version (after the last `@` of the last segment)."""
    at = rest.rfind("@")
    if at <= rest.rfind("/"):
        return rest, None
    return rest[:at], _decode(rest[at + 1 :])


def _normalised(kind: str, namespace: str, name: str) -> tuple[str, str]:
    """Namespace and name as the purl type compares them (case, PyPI's separators)."""
    if kind in _LOWER_NAMES:
        namespace, name = namespace.lower(), name.lower()
    if kind == "pypi":
        name = name.replace("_", "-").replace(".", "-")
    return namespace, name


def _qualifiers(query: str) -> frozenset[tuple[str, str]]:
    """A purl's qualifiers with a value (keys lower-case)."""
    pairs = (item.partition("=") for item in query.split("&"))
    return frozenset((key.lower(), _decode(value)) for key, _, value in pairs if value)


def purl_matches(statement: Purl, component: Purl) -> bool:
    """Whether a statement's purl names the component (see the module docstring)."""
    # A version, subpath or qualifier the statement leaves out matches any.
    return (
        (statement.type, statement.namespace, statement.name)
        == (component.type, component.namespace, component.name)
        and statement.version in (None, component.version)
        and statement.subpath in (None, component.subpath)
        and statement.qualifiers <= component.qualifiers
    )


def _cpe_fields(text: str) -> list[str]:
    """A CPE name's attributes (2.3 formatted string or 2.2 URI), lower-case."""
    lowered = text.lower()
    if lowered.startswith("cpe:2.3:"):
        return _cpe23_fields(lowered[8:])
    if lowered.startswith("cpe:/"):
        return [unquote(p) or "*" for p in lowered[5:].split(":")]
    return [lowered]


def _cpe23_fields(text: str) -> list[str]:
    """The `:`-separated attributes of a CPE 2.3 formatted string (`\\:` escapes one)."""
    fields: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if char == ":" and not escaped:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
        escaped = char == "\\" and not escaped
    fields.append("".join(current))
    return fields


def cpe_matches(statement: str, component: str) -> bool:
    """Whether every attribute the statement's CPE name gives equals the component's."""
    wanted, found = _cpe_fields(statement), _cpe_fields(component)
    for index, value in enumerate(wanted):
        if value in ("*", ""):
            continue
        if index >= len(found) or found[index] != value:
            return False
    return True


@dataclass(frozen=True, slots=True)
class ComponentNames:
    """How a finding's component is known: its ref, purl and CPE names."""

    ref: str
    purl: str | None = None
    cpes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Entry:
    statement: VexStatement
    document: VexDocument
    purls: tuple[Purl, ...]
    cpes: tuple[str, ...]
    refs: frozenset[str]
    rank: tuple[datetime, int]

    @classmethod
    def of(cls, statement: VexStatement, document: VexDocument) -> _Entry:
        purls, cpes, refs = _split(statement.products)
        rank = (statement.timestamp or EARLIEST, statement.order)
        return cls(statement, document, purls, cpes, refs, rank)

    def matches(self, purl: Purl | None, names: ComponentNames) -> bool:
        if names.ref in self.refs:
            return True
        if purl is not None and any(purl_matches(p, purl) for p in self.purls):
            return True
        return any(cpe_matches(c, found) for c in self.cpes for found in names.cpes)


def _split(
    products: Iterable[ProductId],
) -> tuple[tuple[Purl, ...], tuple[str, ...], frozenset[str]]:
    purls: list[Purl] = []
    cpes: list[str] = []
    refs: set[str] = set()
    for product in products:
        if product.kind == "purl":
            parsed = parse_purl(product.value)
            if parsed is not None:
                purls.append(parsed)
            refs.add(product.value)
        elif product.kind == "cpe":
            cpes.append(product.value)
        else:
            refs.add(product.value)
    return tuple(purls), tuple(cpes), frozenset(refs)


class VexIndex:
    """Statements indexed by every vulnerability id and alias they carry."""

    def __init__(self, documents: Sequence[VexDocument]) -> None:
        self.documents = tuple(documents)
        self._by_id: dict[str, list[_Entry]] = {}
        self._purls: dict[str, Purl | None] = {}
        self._assessments: dict[int, Assessment] = {}
        for document in documents:
            for statement in document.statements:
                entry = _Entry.of(statement, document)
                for vid in dict.fromkeys(i.upper() for i in statement.ids):
                    self._by_id.setdefault(vid, []).append(entry)

    def __bool__(self) -> bool:
        return bool(self._by_id)

    def _purl(self, text: str | None) -> Purl | None:
        if text is None:
            return None
        if text not in self._purls:
            self._purls[text] = parse_purl(text)
        return self._purls[text]

    def statement_for(
        self, ids: Iterable[str], names: ComponentNames, product: ComponentNames | None = None
    ) -> tuple[VexStatement, VexDocument] | None:
        """The winning statement about a finding (any of `ids`) on a component, or on the
        `product` the component is part of (an SBOM's own subject: a statement that the
        product is not affected speaks of every component's finding of that
        vulnerability, as OpenVEX reads a product without subcomponents)."""
        components = [(self._purl(names.purl), names)]
        if product is not None:
            components.append((self._purl(product.purl), product))

        def names_one(entry: _Entry) -> bool:
            return any(entry.matches(purl, known) for purl, known in components)

        return self._newest(ids, names_one)

    def any_statement_for(self, ids: Iterable[str]) -> tuple[VexStatement, VexDocument] | None:
        """The newest statement about any of `ids`, whatever product it names (for
        results that name no product)."""
        return self._newest(ids, lambda _entry: True)

    def _newest(
        self, ids: Iterable[str], accepts: Callable[[_Entry], bool]
    ) -> tuple[VexStatement, VexDocument] | None:
        """The newest accepted statement about any of `ids` (the first read at equal
        times); `accepts` is asked only of statements newer than the best so far."""
        best: _Entry | None = None
        for vid in ids:
            for entry in self._by_id.get(vid.upper(), ()):
                if (best is None or entry.rank > best.rank) and accepts(entry):
                    best = entry
        return None if best is None else (best.statement, best.document)

    def assess(
        self, ids: Iterable[str], names: ComponentNames, product: ComponentNames | None = None
    ) -> Assessment | None:
        """The winning statement in a finding's words (made once per statement)."""
        found = self.statement_for(ids, names, product)
        if found is None:
            return None
        key = id(found[0])
        assessment = self._assessments.get(key)
        if assessment is None:
            assessment = self._assessments[key] = Assessment.of(*found)
        return assessment
