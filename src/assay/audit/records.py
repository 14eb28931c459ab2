"""What a scan reads of a CVE record: its configurations, compiled for the scan's names,
and the facts a finding reports (read only for records that affect something).

Pure. Records arrive as NVD-encoded JSON. msgspec decodes just the fields a scan uses
into typed structs and skips the rest (descriptions, references, change notes): 26 us
for a 3.1 kB record of the benchmark corpus against 51 us for a full `orjson.loads`.
The CVSS metrics and weaknesses stay undecoded until a finding needs them. A record
whose fields do not fit the types (a `null` operator, a number for a criteria) is
decoded in full and read leniently instead, with the same outcome as always.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import orjson

from assay.audit.matching import (
    MAX_NODE_DEPTH,
    UNMATCHED,
    Compiled,
    Compiler,
    Match,
    Node,
    RecordFacts,
    bounds_well_formed,
    rating_parts,
    record_facts,
)
from assay.audit.model import cwe_ids
from assay.audit.severity import NVD_METRICS, Rating, choose_severity, nvd_rating
from assay.errors import StoreError

__all__ = ["RecordReader", "ScanRecord"]


class _CpeMatch(msgspec.Struct, frozen=True):
    criteria: str
    vulnerable: bool = True
    matchCriteriaId: str | None = None  # NVD's field names
    versionStartIncluding: str | None = None
    versionStartExcluding: str | None = None
    versionEndIncluding: str | None = None
    versionEndExcluding: str | None = None


class _Node(msgspec.Struct):
    operator: str = "OR"
    negate: bool = False
    cpeMatch: list[_CpeMatch] = []  # msgspec copies defaults
    children: list[_Node] = []


class _Configuration(msgspec.Struct):
    operator: str = "OR"
    negate: bool = False
    nodes: list[_Node] = []


class _Record(msgspec.Struct):
    id: Any = None
    configurations: list[_Configuration] = []
    metrics: msgspec.Raw = msgspec.Raw()
    weaknesses: msgspec.Raw = msgspec.Raw()
    cisaExploitAdd: Any = None


class _CvssData(msgspec.Struct):
    baseScore: float | None = None
    vectorString: str | None = None
    baseSeverity: str | None = None


class _Metric(msgspec.Struct):
    type: str | None = None
    source: str | None = None
    cvssData: _CvssData | None = None
    baseSeverity: str | None = None


class _Metrics(msgspec.Struct):
    cvssMetricV40: list[_Metric] = []
    cvssMetricV31: list[_Metric] = []
    cvssMetricV30: list[_Metric] = []
    cvssMetricV2: list[_Metric] = []


class _Description(msgspec.Struct):
    value: Any = None


class _Weakness(msgspec.Struct):
    description: list[_Description] = []


_RECORD = msgspec.json.Decoder(_Record)
_METRICS = msgspec.json.Decoder(_Metrics | None)
_WEAKNESSES = msgspec.json.Decoder(list[_Weakness] | None)


class ScanRecord:
    """A record as a scan uses it: compiled configurations, facts on demand."""

    __slots__ = ("_facts", "_source", "compiled")

    def __init__(self, compiled: Compiled, source: _Record | Mapping[str, Any]) -> None:
        self.compiled = compiled
        self._source: _Record | Mapping[str, Any] | None = source
        self._facts: RecordFacts | None = None

    def facts(self) -> RecordFacts:
        """What a finding reports of the record (id, severity, CVSS, KEV, CWEs)."""
        if self._facts is None:
            source = self._source
            assert source is not None
            self._facts = _typed_facts(source) if isinstance(source, _Record) else None
            if self._facts is None:
                self._facts = record_facts(_as_mapping(source))
            self._source = None
        return self._facts


def _as_mapping(source: _Record | Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(source, _Record):
        return source
    return {
        "id": source.id,
        "metrics": _loads(source.metrics),
        "weaknesses": _loads(source.weaknesses),
        "cisaExploitAdd": source.cisaExploitAdd,
    }


def _loads(raw: msgspec.Raw) -> Any:
    return orjson.loads(memoryview(raw)) if len(raw) else None


def _typed_ratings(metrics: Any) -> list[Rating]:
    """NVD's ratings of the typed metrics, of every CVSS version."""
    ratings = (
        _typed_rating(entry, version)
        for key, version in (NVD_METRICS if metrics is not None else ())
        for entry in getattr(metrics, key)
    )
    return [rating for rating in ratings if rating is not None]


def _typed_rating(entry: Any, version: str) -> Rating | None:
    """One typed metric's rating; None without a score and a vector."""
    data = entry.cvssData
    if data is None or data.baseScore is None or data.vectorString is None:
        return None
    return nvd_rating(
        entry.type,
        entry.source or "",
        version=version,
        score=data.baseScore,
        vector=data.vectorString,
        severity=data.baseSeverity or entry.baseSeverity,
    )


def _typed_cwes(weaknesses: Any) -> tuple[str, ...]:
    """The CWE ids of the typed weaknesses, each once, in order."""
    return cwe_ids(d.value for weakness in weaknesses or () for d in weakness.description)


def _typed_facts(record: _Record) -> RecordFacts | None:
    """`record_facts` read through typed structs; None when the fields do not fit them
    (the caller then reads them leniently)."""
    try:
        metrics = _METRICS.decode(record.metrics) if len(record.metrics) else None
        weaknesses = _WEAKNESSES.decode(record.weaknesses) if len(record.weaknesses) else None
    except msgspec.ValidationError:
        return None
    cvss, severity, rated_by = rating_parts(choose_severity(_typed_ratings(metrics)))
    return RecordFacts(
        str(record.id),
        severity,
        cvss,
        bool(record.cisaExploitAdd),
        _typed_cwes(weaknesses),
        rated_by,
    )


class RecordReader:
    """Reads a scan's records (see the module docstring), compiling each distinct
    `cpeMatch` once with the scan's `Compiler`."""

    def __init__(self, compiler: Compiler) -> None:
        self.compiler = compiler
        self._matches: dict[_CpeMatch, Match] = {}

    def read(self, raw: bytes) -> ScanRecord:
        """Decode an NVD-encoded record and compile its configurations."""
        try:
            record = _RECORD.decode(raw)
        except msgspec.ValidationError:
            return self._read_leniently(raw)
        except msgspec.DecodeError as error:
            raise StoreError(f"a stored CVE record is not valid JSON: {error}") from None
        compiler = self.compiler
        compiled = tuple(
            compiler.configuration(
                configuration.operator.upper() == "AND",
                configuration.negate,
                [self._node(node, 0) for node in configuration.nodes],
            )
            for configuration in record.configurations
        )
        return ScanRecord(compiled, record)

    def _read_leniently(self, raw: bytes) -> ScanRecord:
        try:
            decoded = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise StoreError(f"a stored CVE record is not valid JSON: {error}") from None
        if not isinstance(decoded, Mapping):
            raise StoreError("a stored CVE record is not a JSON object")
        return ScanRecord(self.compiler.record(decoded), decoded)

    def _node(self, node: _Node, depth: int) -> Node:
        return self.compiler.node(
            node.operator.upper() == "AND",
            node.negate,
            [self._resolve(m) for m in node.cpeMatch],
            [self._node(child, depth + 1) for child in node.children]
            if depth < MAX_NODE_DEPTH
            else [],
        )

    def _resolve(self, m: _CpeMatch) -> Match:
        # Most criteria of a record name products the scan does not have: those are
        # told apart by their text alone, before the whole item is looked up.
        if self.compiler.unmatched(m.criteria) and bounds_well_formed(
            m.versionStartIncluding,
            m.versionStartExcluding,
            m.versionEndIncluding,
            m.versionEndExcluding,
        ):
            return UNMATCHED
        return self._matches.get(m) or self._match(m)

    def _match(self, m: _CpeMatch) -> Match:
        found = self._matches[m] = self.compiler.match(
            (
                m.criteria,
                m.versionStartIncluding,
                m.versionStartExcluding,
                m.versionEndIncluding,
                m.versionEndExcluding,
                m.vulnerable,
                m.matchCriteriaId,
            )
        )
        return found
