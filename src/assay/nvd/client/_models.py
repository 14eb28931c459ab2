"""Typed NVD API 2.0 results, parsed from response bytes.

Records are lenient and lossless: each one is a frozen `msgspec.Struct` with the fields
assay reads typed, plus `raw`, the record's JSON object exactly as decoded, so unknown
and future fields survive (`extra` lists just those). Item wrappers keep the wire shape of
the reference client (`result.vulnerabilities[i].cve`, `result.cve_changes[i].change`,
`result.products[i].cpe`, `result.match_strings[i].match_string`).

`parse_cves`, `parse_cve_history`, `parse_cpes` and `parse_cpe_match` turn a response body
into a result; they are pure and public so that benchmarks and the mirror can call them.
"""

from __future__ import annotations

import gc
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, ClassVar, Generic, TypeVar

import msgspec

from assay.nvd.client._errors import NvdResponseError
from assay.nvd.operations import OPERATIONS, Operation


def _utc(text: str) -> datetime:
    """NVD record timestamps are UTC without an offset (`2023-04-25T19:15:10.180`)."""
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _camel_or_hidden(name: str) -> str:
    # `raw` is filled after decoding; its wire name is one NVD will never send.
    if name == "raw_json":
        return "__assay_raw_json__"
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class _Record(msgspec.Struct, frozen=True, dict=True, rename=_camel_or_hidden, kw_only=True):
    """Base of every typed record: typed fields plus the record's JSON exactly as received."""

    raw_json: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    """The record's JSON text, byte for byte as the service sent it (`\\/` escapes kept)."""

    _wire_names: ClassVar[frozenset[str]] = frozenset()

    @cached_property
    def raw(self) -> dict[str, Any]:
        """The record's JSON object, decoded from `raw_json`: the lossless form to store."""
        if not self.raw_json:  # built in code rather than parsed: render the typed fields
            return {
                field.encode_name: msgspec.to_builtins(getattr(self, field.name))
                for field in msgspec.structs.fields(self)
                if field.name != "raw_json" and getattr(self, field.name) is not None
            }
        value = _PLAIN.decode(self.raw_json)
        assert isinstance(value, dict)
        return value

    @property
    def extra(self) -> dict[str, Any]:
        """Fields of `raw` this model does not type (fields NVD adds later land here)."""
        known = type(self)._wire_names
        return {k: v for k, v in self.raw.items() if k not in known}


# --- small shared shapes --------------------------------------------------------------


class LangString(msgspec.Struct, gc=False, frozen=True):
    """A text in one language (`{"lang": "en", "value": "..."}`)."""

    lang: str
    value: str


class Reference(msgspec.Struct, gc=False, frozen=True):
    """A CVE reference link."""

    url: str
    source: str | None = None
    tags: list[str] = msgspec.field(default_factory=list)


class Weakness(msgspec.Struct, gc=False, frozen=True):
    """A CWE classification by one source."""

    source: str
    type: str
    description: list[LangString] = msgspec.field(default_factory=list)


class CveTag(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """Tags (`disputed`, ...) a source put on a CVE."""

    source_identifier: str | None = None
    tags: list[str] = msgspec.field(default_factory=list)


class VendorComment(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """A vendor's statement about a CVE."""

    organization: str
    comment: str
    last_modified: str | None = None


class CvssMetric(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """One CVSS assessment (any version). `cvss_data` keeps every vector field as sent."""

    source: str
    type: str
    cvss_data: dict[str, Any]
    base_severity: str | None = None
    exploitability_score: float | None = None
    impact_score: float | None = None

    @property
    def severity(self) -> str | None:
        """Base severity: outside `cvssData` for V2, inside it for V3 and V4."""
        inner = self.cvss_data.get("baseSeverity")
        return self.base_severity if self.base_severity is not None else inner

    @property
    def base_score(self) -> float | None:
        """The base score of the vector."""
        score = self.cvss_data.get("baseScore")
        return float(score) if score is not None else None

    @property
    def vector_string(self) -> str | None:
        """The vector string as NVD sent it."""
        vector = self.cvss_data.get("vectorString")
        return vector if isinstance(vector, str) else None


class Metrics(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """The CVSS metric lists of a CVE, newest version first."""

    cvss_metric_v40: list[CvssMetric] = msgspec.field(default_factory=list)
    cvss_metric_v31: list[CvssMetric] = msgspec.field(default_factory=list)
    cvss_metric_v30: list[CvssMetric] = msgspec.field(default_factory=list)
    cvss_metric_v2: list[CvssMetric] = msgspec.field(default_factory=list)


class CpeMatch(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """A match criteria inside a CVE configuration node."""

    vulnerable: bool
    criteria: str
    match_criteria_id: str | None = None
    version_start_including: str | None = None
    version_start_excluding: str | None = None
    version_end_including: str | None = None
    version_end_excluding: str | None = None


class Node(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """A configuration node: criteria combined with `operator`."""

    operator: str = "OR"
    negate: bool = False
    cpe_match: list[CpeMatch] = msgspec.field(default_factory=list)


class Configuration(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """One applicability statement of a CVE."""

    nodes: list[Node] = msgspec.field(default_factory=list)
    operator: str | None = None
    negate: bool | None = None


# --- records ----------------------------------------------------------------------------


class Cve(_Record, frozen=True, kw_only=True):
    """A CVE record (`vulnerabilities[i].cve`)."""

    id: str
    source_identifier: str | None = None
    published: str
    last_modified: str
    vuln_status: str | None = None
    cve_tags: list[CveTag] = msgspec.field(default_factory=list)
    cisa_exploit_add: str | None = None
    cisa_action_due: str | None = None
    cisa_required_action: str | None = None
    cisa_vulnerability_name: str | None = None
    evaluator_comment: str | None = None
    evaluator_solution: str | None = None
    evaluator_impact: str | None = None
    descriptions: list[LangString] = msgspec.field(default_factory=list)
    metrics: Metrics = msgspec.field(default_factory=Metrics)
    weaknesses: list[Weakness] = msgspec.field(default_factory=list)
    configurations: list[Configuration] = msgspec.field(default_factory=list)
    references: list[Reference] = msgspec.field(default_factory=list)
    vendor_comments: list[VendorComment] = msgspec.field(default_factory=list)

    @property
    def published_at(self) -> datetime:
        """`published` as an aware UTC datetime."""
        return _utc(self.published)

    @property
    def last_modified_at(self) -> datetime:
        """`lastModified` as an aware UTC datetime."""
        return _utc(self.last_modified)

    @property
    def description(self) -> str | None:
        """The English description (or the first one)."""
        for text in self.descriptions:
            if text.lang == "en":
                return text.value
        return self.descriptions[0].value if self.descriptions else None


class ChangeDetail(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """One detail line of a change event. Values are kept as sent (strings in practice)."""

    action: str | None = None
    type: str | None = None
    old_value: Any = None
    new_value: Any = None


class Change(_Record, frozen=True, kw_only=True):
    """A CVE change event (`cveChanges[i].change`)."""

    cve_id: str
    event_name: str
    cve_change_id: str
    source_identifier: str | None = None
    created: str | None = None
    details: list[ChangeDetail] = msgspec.field(default_factory=list)

    @property
    def created_at(self) -> datetime | None:
        """`created` as an aware UTC datetime."""
        return _utc(self.created) if self.created is not None else None


class CpeTitle(msgspec.Struct, gc=False, frozen=True):
    """A product title in one language."""

    title: str
    lang: str


class CpeRef(msgspec.Struct, gc=False, frozen=True):
    """A product reference link."""

    ref: str
    type: str | None = None


class CpeName(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """A CPE name and its UUID (deprecation links, match results)."""

    cpe_name: str
    cpe_name_id: str


class Cpe(_Record, frozen=True, kw_only=True):
    """A CPE dictionary record (`products[i].cpe`)."""

    cpe_name: str
    cpe_name_id: str
    deprecated: bool = False
    last_modified: str
    created: str
    titles: list[CpeTitle] = msgspec.field(default_factory=list)
    refs: list[CpeRef] = msgspec.field(default_factory=list)
    deprecated_by: list[CpeName] = msgspec.field(default_factory=list)
    deprecates: list[CpeName] = msgspec.field(default_factory=list)

    @property
    def last_modified_at(self) -> datetime:
        """`lastModified` as an aware UTC datetime."""
        return _utc(self.last_modified)


class MatchString(_Record, frozen=True, kw_only=True):
    """A match criteria record (`matchStrings[i].matchString`)."""

    match_criteria_id: str
    criteria: str
    version_start_including: str | None = None
    version_start_excluding: str | None = None
    version_end_including: str | None = None
    version_end_excluding: str | None = None
    last_modified: str
    cpe_last_modified: str | None = None
    created: str
    status: str
    matches: list[CpeName] = msgspec.field(default_factory=list)

    @property
    def last_modified_at(self) -> datetime:
        """`lastModified` as an aware UTC datetime."""
        return _utc(self.last_modified)


class AcceptanceLevel(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """How far NVD accepts a source's CVSS or CWE data (`Contributor`, `Provider`, ...)."""

    description: str
    last_modified: str


class Source(_Record, frozen=True, kw_only=True):
    """A CVE source, an assigner such as a CNA (`sources[i]`: not wrapped)."""

    name: str | None = None
    contact_email: str | None = None
    source_identifiers: list[str] = msgspec.field(default_factory=list)
    last_modified: str
    created: str
    v2_acceptance_level: AcceptanceLevel | None = None
    v3_acceptance_level: AcceptanceLevel | None = None
    cwe_acceptance_level: AcceptanceLevel | None = None

    @property
    def last_modified_at(self) -> datetime:
        """`lastModified` as an aware UTC datetime."""
        return _utc(self.last_modified)


def _wire(cls: type[_Record]) -> None:
    cls._wire_names = frozenset(
        f.encode_name for f in msgspec.structs.fields(cls) if f.name != "raw_json"
    )


for _cls in (Cve, Change, Cpe, MatchString, Source):
    _wire(_cls)


# --- item wrappers and results --------------------------------------------------------


class CveItem(msgspec.Struct, gc=False, frozen=True):
    """`{"cve": {...}}`."""

    cve: Cve


class ChangeItem(msgspec.Struct, gc=False, frozen=True):
    """`{"change": {...}}`."""

    change: Change


class CpeItem(msgspec.Struct, gc=False, frozen=True):
    """`{"cpe": {...}}`."""

    cpe: Cpe


class MatchStringItem(msgspec.Struct, gc=False, frozen=True, rename="camel"):
    """`{"matchString": {...}}`."""

    match_string: MatchString


class Result(msgspec.Struct, gc=False, frozen=True, kw_only=True, rename="camel"):
    """Envelope fields common to the four result sets."""

    results_per_page: int
    start_index: int
    total_results: int
    format: str | None = None
    version: str | None = None
    timestamp: str | None = None

    def records(self) -> list[Any]:
        """The records of this page, unwrapped (`Cve`, `Change`, `Cpe` or `MatchString`)."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.records())


class CveResult(Result, frozen=True, kw_only=True):
    """A page (or concatenation) of CVE records."""

    vulnerabilities: list[CveItem] = msgspec.field(default_factory=list)

    def records(self) -> list[Cve]:
        return [item.cve for item in self.vulnerabilities]


class CveHistoryResult(Result, frozen=True, kw_only=True):
    """A page (or concatenation) of CVE change events."""

    cve_changes: list[ChangeItem] = msgspec.field(default_factory=list)

    def records(self) -> list[Change]:
        return [item.change for item in self.cve_changes]


class CpeResult(Result, frozen=True, kw_only=True):
    """A page (or concatenation) of CPE records."""

    products: list[CpeItem] = msgspec.field(default_factory=list)

    def records(self) -> list[Cpe]:
        return [item.cpe for item in self.products]


class CpeMatchResult(Result, frozen=True, kw_only=True):
    """A page (or concatenation) of match criteria records."""

    match_strings: list[MatchStringItem] = msgspec.field(default_factory=list)

    def records(self) -> list[MatchString]:
        return [item.match_string for item in self.match_strings]


class SourceResult(Result, frozen=True, kw_only=True):
    """A page (or concatenation) of source records (NVD does not wrap them)."""

    sources: list[Source] = msgspec.field(default_factory=list)

    def records(self) -> list[Source]:
        return list(self.sources)


# --- parsing ----------------------------------------------------------------------------

_PLAIN = msgspec.json.Decoder()
_ENVELOPE = Result.__struct_fields__  # the fields every page has, whatever its records

R = TypeVar("R", bound=Result)
Body = bytes | bytearray | memoryview | str


class _RawItem(msgspec.Struct, gc=False):
    """A list item whose record is kept as undecoded JSON text."""

    record: msgspec.Raw


class _Parser(Generic[R]):
    """Decode the envelope with records left as raw JSON, then each record typed.

    Keeping each record's exact bytes (`raw_json`) costs nothing extra, and decoding the
    plain dict only when `raw` is read keeps a 2000-record page well under 60 ms.
    """

    def __init__(
        self,
        result_type: type[R],
        record_type: type[_Record],
        item_type: type[msgspec.Struct] | None,
        operation: Operation,
    ) -> None:
        """`item_type` is None where the list holds the records themselves."""
        self._attr = operation.result_attr
        self._list_key = operation.list_key
        self._wrapper = operation.wrapper
        self._envelope: msgspec.json.Decoder[Any] = msgspec.json.Decoder(
            self._raw_envelope(result_type, item_type)
        )
        self._record: msgspec.json.Decoder[Any] = msgspec.json.Decoder(record_type)
        self._result_type = result_type
        self._item_type = item_type

    def _raw_envelope(self, result_type: type[R], item_type: type[msgspec.Struct] | None) -> Any:
        """The result's envelope with each listed record left as raw JSON text."""
        raw_item: Any = msgspec.Raw
        if item_type is not None and self._wrapper is not None:
            raw_item = msgspec.defstruct(
                f"_Raw{item_type.__name__}",
                [("record", msgspec.Raw)],
                rename={"record": self._wrapper},
                gc=False,
            )
        return msgspec.defstruct(
            f"_Raw{result_type.__name__}",
            [(self._attr, list[raw_item], msgspec.field(default_factory=list))],
            bases=(Result,),
            kw_only=True,
            rename="camel",
            gc=False,
        )

    def __call__(self, body: Body) -> R:
        gc_was_enabled = gc.isenabled()
        gc.disable()  # a page is ~10^5 fresh containers without cycles: GC passes only cost
        try:
            return self._parse(body)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _parse(self, body: Body) -> R:
        envelope = self._decode_envelope(body)
        decode = self._record.decode
        set_raw = msgspec.structs.force_setattr
        wrap = self._item_type
        items = []
        for index, item in enumerate(getattr(envelope, self._attr)):
            raw = item if wrap is None else item.record
            try:
                record = decode(raw)
            except (msgspec.DecodeError, RecursionError) as exc:
                raise self._bad_record(index, exc) from None
            set_raw(record, "raw_json", raw)
            items.append(record if wrap is None else wrap(record))
        fields: dict[str, Any] = {name: getattr(envelope, name) for name in _ENVELOPE}
        fields[self._attr] = items
        return self._result_type(**fields)

    def _decode_envelope(self, body: Body) -> Any:
        try:
            return self._envelope.decode(body)
        except msgspec.DecodeError as exc:
            raise NvdResponseError(f"not an NVD API 2.0 {self._list_key} result: {exc}") from exc
        except RecursionError:
            # msgspec stops at the interpreter's recursion limit (about 1,000 levels):
            # memory stays bounded, and a page nested that deep is no NVD answer.
            raise NvdResponseError(
                f"not an NVD API 2.0 {self._list_key} result: JSON nested too deeply"
            ) from None

    def _bad_record(self, index: int, exc: Exception) -> NvdResponseError:
        """The error for the record at `index` that does not decode, naming its path."""
        where = f"$.{self._list_key}[{index}]"
        where += f".{self._wrapper}" if self._wrapper else ""
        reason = "JSON nested too deeply" if isinstance(exc, RecursionError) else exc
        return NvdResponseError(f"{where}: {reason}")


# The operation's facts name the result's list, its key on the wire and the item wrapper.
_parse_cves = _Parser(CveResult, Cve, CveItem, OPERATIONS["cves"])
_parse_history = _Parser(CveHistoryResult, Change, ChangeItem, OPERATIONS["cvehistory"])
_parse_cpes = _Parser(CpeResult, Cpe, CpeItem, OPERATIONS["cpes"])
_parse_cpe_match = _Parser(CpeMatchResult, MatchString, MatchStringItem, OPERATIONS["cpematch"])
_parse_sources = _Parser(SourceResult, Source, None, OPERATIONS["source"])


def parse_sources(body: Body) -> SourceResult:
    """Parse a `/source/2.0` response body into a `SourceResult`."""
    return _parse_sources(body)


def parse_cves(body: Body) -> CveResult:
    """Parse a `/cves/2.0` response body into a `CveResult` (raises `NvdResponseError`)."""
    return _parse_cves(body)


def parse_cve_history(body: Body) -> CveHistoryResult:
    """Parse a `/cvehistory/2.0` response body into a `CveHistoryResult`."""
    return _parse_history(body)


def parse_cpes(body: Body) -> CpeResult:
    """Parse a `/cpes/2.0` response body into a `CpeResult`."""
    return _parse_cpes(body)


def parse_cpe_match(body: Body) -> CpeMatchResult:
    """Parse a `/cpematch/2.0` response body into a `CpeMatchResult`."""
    return _parse_cpe_match(body)
