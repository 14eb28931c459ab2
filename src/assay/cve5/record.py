"""A strict reader of CVE JSON 5.x records (CVE Record Format 5.0, 5.1, 5.2).

Pure. `read_record(data, source)` checks the bytes (size, nesting, repeated keys) and the
fields assay reads (their JSON types, required members, identifiers), and returns a typed
`CveRecord` that keeps the exact bytes it was read from. Members assay does not read are
left as they are (the format grows: `x_` extensions, 5.2's `cpeApplicability`), but a
member it reads that has the wrong type is an error naming the file and the JSON path.

    record = read_record(path.read_bytes(), str(path))
    record.cve_id, record.date_updated, record.cna.affected, record.adp[0].ssvc

The containers: `containers.cna` (the CVE Numbering Authority's statement) and each
`containers.adp[]` (Authorized Data Publishers: CISA-ADP's "Vulnrichment" adds SSVC and
KEV in `metrics[].other`, CVSS, CWEs and CPEs in `affected[].cpes`; the CVE Program
Container adds references).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from assay import _json_strict
from assay.errors import IngestError

__all__ = [
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "Affected",
    "Container",
    "Cve5Error",
    "CveRecord",
    "Cvss5",
    "KevMark",
    "Ssvc",
    "VersionEntry",
    "looks_like_record",
    "read_record",
    "record_from_value",
    "strict_json",
]

MAX_RECORD_BYTES: Final = 16 * 1024 * 1024
"""The largest record read (the largest in cvelistV5 are a few MiB: kernel CVEs with
thousands of versions)."""
MAX_DEPTH: Final = 32
CVE_ID: Final = re.compile(r"CVE-[0-9]{4}-[0-9]{4,19}")
STATES: Final = ("PUBLISHED", "REJECTED")
STATUSES: Final = ("affected", "unaffected", "unknown")
CVSS_KEYS: Final = (
    ("cvssV4_0", "4.0"),
    ("cvssV3_1", "3.1"),
    ("cvssV3_0", "3.0"),
    ("cvssV2_0", "2.0"),
)


class Cve5Error(IngestError):
    """A CVE JSON 5 record is not one: names the file and the JSON path."""


@dataclass(frozen=True, slots=True)
class VersionEntry:
    """One `affected[].versions[]` entry: a version, or a range from `version` up to
    `less_than` (excluded) or `less_than_or_equal`, with `changes` of status inside it."""

    version: str
    status: str
    version_type: str | None = None
    less_than: str | None = None
    less_than_or_equal: str | None = None
    changes: tuple[tuple[str, str], ...] = ()
    """(at, status) pairs: from version `at` on, the status is `status`."""

    @property
    def is_range(self) -> bool:
        return self.less_than is not None or self.less_than_or_equal is not None


@dataclass(frozen=True, slots=True)
class Affected:
    """One `affected[]` entry of a container: what product, and which versions."""

    path: str
    """Its JSON path in the record (`$.containers.adp[0].affected[2]`): the rule a match
    names."""
    vendor: str | None
    product: str | None
    package_name: str | None
    collection_url: str | None
    package_url: str | None
    cpes: tuple[str, ...]
    versions: tuple[VersionEntry, ...]
    default_status: str
    """`unknown` when the record does not say."""
    platforms: tuple[str, ...] = ()
    repo: str | None = None


@dataclass(frozen=True, slots=True)
class Cvss5:
    version: str
    base_score: float
    severity: str | None
    vector: str
    path: str


@dataclass(frozen=True, slots=True)
class Ssvc:
    """CISA's SSVC decision points (`metrics[].other`, type `ssvc`)."""

    exploitation: str | None
    automatable: str | None
    technical_impact: str | None
    role: str | None
    version: str | None
    timestamp: str | None


@dataclass(frozen=True, slots=True)
class KevMark:
    """A container's statement that the CVE is in CISA's KEV catalogue."""

    date_added: str | None
    reference: str | None


@dataclass(frozen=True, slots=True)
class Container:
    kind: str
    """`cna` or `adp`."""
    path: str
    org_id: str
    short_name: str | None
    date_updated: str | None
    title: str | None
    descriptions: tuple[tuple[str, str], ...]
    """(lang, value) pairs."""
    affected: tuple[Affected, ...]
    cvss: tuple[Cvss5, ...]
    cwes: tuple[tuple[str, str], ...]
    """(cweId, description) pairs; the id is empty for a description without one."""
    references: tuple[str, ...]
    ssvc: Ssvc | None = None
    kev: KevMark | None = None
    rejected_reasons: tuple[str, ...] = ()

    @property
    def description(self) -> str:
        english = [value for lang, value in self.descriptions if lang.lower().startswith("en")]
        return (english or [value for _, value in self.descriptions] or [""])[0]


@dataclass(frozen=True, slots=True)
class CveRecord:
    cve_id: str
    state: str
    data_version: str
    assigner_org_id: str
    assigner_short_name: str | None
    date_published: str | None
    date_updated: str
    """`cveMetadata.dateUpdated`, or `datePublished`/`dateRejected`/`dateReserved` for
    records without one, or "" for an undated submission (older than any dated record):
    the write rule of the store compares it."""
    cna: Container
    adp: tuple[Container, ...]
    raw: bytes

    @property
    def containers(self) -> tuple[Container, ...]:
        return (self.cna, *self.adp)


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> Cve5Error:
        return Cve5Error(self.source, path, message)

    def obj(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, found {_json_strict.type_name(value)}")
        return value

    def array(self, parent: Mapping[str, Any], key: str, path: str) -> list[Any]:
        value = parent.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(
                _json_strict.member(path, key),
                f"expected an array, found {_json_strict.type_name(value)}",
            )
        return value

    def text(
        self, parent: Mapping[str, Any], key: str, path: str, *, required: bool = False
    ) -> Any:
        value = parent.get(key)
        if value is None:
            if required:
                raise self.fail(_json_strict.member(path, key), "required, found nothing")
            return None
        if not isinstance(value, str):
            raise self.fail(
                _json_strict.member(path, key),
                f"expected a string, found {_json_strict.type_name(value)}",
            )
        return value

    def texts(self, parent: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        items = self.array(parent, key, path)
        where = _json_strict.member(path, key)
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise self.fail(
                    _json_strict.member(where, index),
                    f"expected a string, found {_json_strict.type_name(item)}",
                )
        return tuple(items)

    def objects(
        self, parent: Mapping[str, Any], key: str, path: str
    ) -> Iterator[tuple[Mapping[str, Any], str]]:
        """Each object of the array `parent[key]` (none when absent), with its path."""
        where = _json_strict.member(path, key)
        for index, item in enumerate(self.array(parent, key, path)):
            at = _json_strict.member(where, index)
            yield self.obj(item, at), at

    def status(self, parent: Mapping[str, Any], key: str, path: str, default: str | None) -> str:
        value = self.text(parent, key, path, required=default is None)
        if value is None:
            assert default is not None
            return default
        if value not in STATUSES:
            raise self.fail(
                _json_strict.member(path, key),
                f"expected one of {', '.join(STATUSES)}, found {value!r}",
            )
        return str(value)

    # -- parts ---------------------------------------------------------------------

    def version(self, value: Any, path: str) -> VersionEntry:
        entry = self.obj(value, path)
        changes: list[tuple[str, str]] = []
        for change, where in self.objects(entry, "changes", path):
            at = self.text(change, "at", where, required=True)
            changes.append((at, self.status(change, "status", where, None)))
        return VersionEntry(
            version=self.text(entry, "version", path, required=True),
            status=self.status(entry, "status", path, None),
            version_type=self.text(entry, "versionType", path),
            less_than=self.text(entry, "lessThan", path),
            less_than_or_equal=self.text(entry, "lessThanOrEqual", path),
            changes=tuple(changes),
        )

    def affected(self, value: Any, path: str) -> Affected:
        entry = self.obj(value, path)
        versions_at = _json_strict.member(path, "versions")
        return Affected(
            path=path,
            vendor=self.text(entry, "vendor", path),
            product=self.text(entry, "product", path),
            package_name=self.text(entry, "packageName", path),
            collection_url=self.text(entry, "collectionURL", path),
            package_url=self.text(entry, "packageURL", path),
            cpes=self.texts(entry, "cpes", path),
            versions=tuple(
                self.version(item, _json_strict.member(versions_at, index))
                for index, item in enumerate(self.array(entry, "versions", path))
            ),
            default_status=self.status(entry, "defaultStatus", path, "unknown"),
            platforms=self.texts(entry, "platforms", path),
            repo=self.text(entry, "repo", path),
        )

    def metrics(
        self, container: Mapping[str, Any], path: str
    ) -> tuple[tuple[Cvss5, ...], Ssvc | None, KevMark | None]:
        scores: list[Cvss5] = []
        ssvc: Ssvc | None = None
        kev: KevMark | None = None
        for metric, at in self.objects(container, "metrics", path):
            scores.extend(self.cvss(metric, at))
            if "other" in metric:
                other = self.other(metric["other"], _json_strict.member(at, "other"))
                if isinstance(other, Ssvc):
                    ssvc = other
                elif isinstance(other, KevMark):
                    kev = other
        return tuple(scores), ssvc, kev

    def cvss(self, metric: Mapping[str, Any], path: str) -> list[Cvss5]:
        """The CVSS scores of one `metrics[]` entry (each version's key it holds)."""
        scores: list[Cvss5] = []
        for key, version in CVSS_KEYS:
            if key not in metric:
                continue
            data_at = _json_strict.member(path, key)
            data = self.obj(metric[key], data_at)
            score = self.base_score(data, data_at)
            severity = self.text(data, "baseSeverity", data_at)
            scores.append(
                Cvss5(
                    version=version,
                    base_score=score,
                    severity=severity.upper() if severity else None,
                    vector=self.text(data, "vectorString", data_at, required=True),
                    path=data_at,
                )
            )
        return scores

    def base_score(self, data: Mapping[str, Any], path: str) -> float:
        score = data.get("baseScore")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise self.fail(
                _json_strict.member(path, "baseScore"),
                f"expected a number, found {_json_strict.type_name(score)}",
            )
        if not 0 <= score <= 10:
            raise self.fail(_json_strict.member(path, "baseScore"), f"expected 0-10, found {score}")
        return float(score)

    def other(self, value: Any, path: str) -> Ssvc | KevMark | None:
        """A `metrics[].other` entry: CISA-ADP's SSVC decision points or KEV mark (None
        for another type)."""
        other = self.obj(value, path)
        kind = self.text(other, "type", path, required=True).lower()
        content_at = _json_strict.member(path, "content")
        content = self.obj(other.get("content"), content_at)
        if kind == "ssvc":
            return self.ssvc(content, content_at)
        if kind == "kev":
            return KevMark(
                date_added=self.text(content, "dateAdded", content_at),
                reference=self.text(content, "reference", content_at),
            )
        return None

    def ssvc(self, content: Mapping[str, Any], path: str) -> Ssvc:
        points: dict[str, str] = {}
        for option, at in self.objects(content, "options", path):
            for name, value in option.items():
                if not isinstance(value, str):
                    raise self.fail(
                        _json_strict.member(at, name),
                        f"expected a string, found {_json_strict.type_name(value)}",
                    )
                points[name.lower()] = value
        return Ssvc(
            exploitation=points.get("exploitation"),
            automatable=points.get("automatable"),
            technical_impact=points.get("technical impact"),
            role=self.text(content, "role", path),
            version=self.text(content, "version", path),
            timestamp=self.text(content, "timestamp", path),
        )

    def descriptions(self, container: Mapping[str, Any], path: str) -> list[tuple[str, str]]:
        """(lang, value) of each of `descriptions`."""
        return [
            (
                self.text(item, "lang", at, required=True),
                self.text(item, "value", at, required=True),
            )
            for item, at in self.objects(container, "descriptions", path)
        ]

    def cwes(self, container: Mapping[str, Any], path: str) -> list[tuple[str, str]]:
        """(cweId, description) of each `problemTypes[].descriptions[]` ("" when unsaid)."""
        return [
            (
                self.text(entry, "cweId", entry_at) or "",
                self.text(entry, "description", entry_at) or "",
            )
            for problem, at in self.objects(container, "problemTypes", path)
            for entry, entry_at in self.objects(problem, "descriptions", at)
        ]

    def container(self, value: Any, kind: str, path: str) -> Container:
        container = self.obj(value, path)
        meta_at = _json_strict.member(path, "providerMetadata")
        meta = self.obj(container.get("providerMetadata"), meta_at)
        descriptions = self.descriptions(container, path)
        cwes = self.cwes(container, path)
        references = [
            self.text(item, "url", at, required=True)
            for item, at in self.objects(container, "references", path)
        ]
        affected_at = _json_strict.member(path, "affected")
        cvss, ssvc, kev = self.metrics(container, path)
        rejected = [
            self.text(item, "value", at, required=True)
            for item, at in self.objects(container, "rejectedReasons", path)
        ]
        return Container(
            kind=kind,
            path=path,
            org_id=self.text(meta, "orgId", meta_at, required=True),
            short_name=self.text(meta, "shortName", meta_at),
            date_updated=self.text(meta, "dateUpdated", meta_at),
            title=self.text(container, "title", path),
            descriptions=tuple(descriptions),
            affected=tuple(
                self.affected(item, _json_strict.member(affected_at, index))
                for index, item in enumerate(self.array(container, "affected", path))
            ),
            cvss=cvss,
            cwes=tuple(cwes),
            references=tuple(references),
            ssvc=ssvc,
            kev=kev,
            rejected_reasons=tuple(rejected),
        )

    def record(self, value: Any, raw: bytes) -> CveRecord:
        document = self.obj(value, "$")
        data_version = self.data_version(document)
        meta = self.obj(document.get("cveMetadata"), "$.cveMetadata")
        cve_id = self.cve_id(meta)
        state = self.state(meta)
        published = self.text(meta, "datePublished", "$.cveMetadata")
        updated = self.date_updated(meta, published)
        containers = self.obj(document.get("containers"), "$.containers")
        cna = self.container(containers.get("cna"), "cna", "$.containers.cna")
        adp = self.adp_containers(containers)
        return CveRecord(
            cve_id=cve_id,
            state=state,
            data_version=data_version,
            assigner_org_id=self.text(meta, "assignerOrgId", "$.cveMetadata") or cna.org_id,
            assigner_short_name=self.text(meta, "assignerShortName", "$.cveMetadata"),
            date_published=published,
            date_updated=updated,
            cna=cna,
            adp=adp,
            raw=raw,
        )

    def date_updated(self, meta: Mapping[str, Any], published: str | None) -> str:
        """`dateUpdated`, else the first of `datePublished`, `dateRejected`,
        `dateReserved`, else "" (see `CveRecord.date_updated`)."""
        return (
            self.text(meta, "dateUpdated", "$.cveMetadata")
            or published
            or self.text(meta, "dateRejected", "$.cveMetadata")
            or self.text(meta, "dateReserved", "$.cveMetadata")
            or ""
        )

    def adp_containers(self, containers: Mapping[str, Any]) -> tuple[Container, ...]:
        return tuple(
            self.container(item, "adp", f"$.containers.adp[{index}]")
            for index, item in enumerate(self.array(containers, "adp", "$.containers"))
        )

    def data_version(self, document: Mapping[str, Any]) -> str:
        """The record's `dataVersion` (5.x), once `dataType` says it is a CVE record."""
        data_type = document.get("dataType")
        if data_type != "CVE_RECORD":
            raise self.fail("$.dataType", f'expected "CVE_RECORD", found {data_type!r}')
        data_version = self.text(document, "dataVersion", "$", required=True)
        if not re.fullmatch(r"5\.[0-9]+(\.[0-9]+)?", data_version):
            raise self.fail("$.dataVersion", f"expected 5.x, found {data_version!r}")
        return str(data_version)

    def cve_id(self, meta: Mapping[str, Any]) -> str:
        cve_id = self.text(meta, "cveId", "$.cveMetadata", required=True)
        if not CVE_ID.fullmatch(cve_id):
            raise self.fail("$.cveMetadata.cveId", f"expected CVE-YYYY-NNNN, found {cve_id!r}")
        return str(cve_id)

    def state(self, meta: Mapping[str, Any]) -> str:
        # The Go CNA publishes records as submitted to CVE Services: `cveMetadata` holds
        # the id alone (no state, no dates, no assigner), read as published and undated.
        state = self.text(meta, "state", "$.cveMetadata") or "PUBLISHED"
        if state not in STATES:
            raise self.fail(
                "$.cveMetadata.state", f"expected PUBLISHED or REJECTED, found {state!r}"
            )
        return str(state)


def read_record(data: bytes, source: str) -> CveRecord:
    """The record in `data` (the bytes of one CVE JSON 5 file), or `Cve5Error` naming
    `source` and the JSON path of the first problem."""
    value = strict_json(data, source, Cve5Error, max_bytes=MAX_RECORD_BYTES, max_depth=MAX_DEPTH)
    return _Reader(source).record(value, data)


def strict_json(
    data: bytes, source: str, error: type[IngestError], *, max_bytes: int, max_depth: int
) -> Any:
    """`data` parsed as strict JSON (no repeated keys, at most `max_bytes` and `max_depth`
    deep), or `error` naming `source` and the JSON path of the first problem."""
    if len(data) > max_bytes:
        raise error(source, "", f"expected at most {max_bytes} bytes, found more")
    try:
        value, problem = _json_strict.parse_checked(data, max_depth)
    except (ValueError, RecursionError) as exc:
        raise error(source, "", f"expected JSON: {exc}") from None
    if problem is not None:
        where, kind = problem
        raise error(source, where, _json_strict.problem_reason(kind, max_depth))
    return value


def record_from_value(value: Any, source: str, raw: bytes = b"") -> CveRecord:
    """A record from parsed JSON (already checked for size and repeated keys)."""
    return _Reader(source).record(value, raw)


def looks_like_record(value: Any) -> bool:
    """Whether parsed JSON claims to be a CVE record (`dataType` CVE_RECORD): a file in a
    checkout that does not (a delta log, a `.github` workflow) is not one."""
    return isinstance(value, dict) and value.get("dataType") == "CVE_RECORD"
