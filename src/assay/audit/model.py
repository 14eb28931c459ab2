"""What a scan reads and what it answers, as typed values.

An input file becomes an `Inventory` of `Component`s (`assay.audit.inputs`); each
component is identified (`assay.audit.identify`) and matched against a vulnerability
source (`assay.audit.matching`); the answer is a `ScanResult`, whose `to_dict()` is the
JSON contract of `assay scan --format json` and `POST /api/scan` (docs/scan.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

from assay.policy.vulnerabilities import SEVERITY_ORDER
from assay.vex.model import Assessment

IDENTIFIED_BY: Final = ("cpe", "purl", "repository", "name")
"""How a component was identified, strongest first (docs/scan.md, Identification)."""


class _JsonFields:
    """A record whose JSON form is its fields under the keys `JSON_KEYS` names (tuples
    written as arrays)."""

    __slots__ = ()
    JSON_KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(field, JSON key) of each field written, in order."""

    def to_dict(self) -> dict[str, Any]:
        return {key: _json_value(getattr(self, name)) for name, key in self.JSON_KEYS}


def present(**members: Any) -> dict[str, Any]:
    """The members that are set (truthy), in order: a JSON object's optional members."""
    return {key: value for key, value in members.items() if value}


def _json_value(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class Component:
    """One thing that went into a build, as an input describes it."""

    ref: str
    """The CycloneDX `bom-ref`, the SPDX `SPDXID`, or `name@version`."""
    name: str
    version: str | None = None
    purl: str | None = None
    cpes: tuple[str, ...] = ()
    """CPE names the input gives for it (CycloneDX `cpe`, SPDX `cpe23Type`/`cpe22Type`)."""
    repository: str | None = None
    """Its source repository URL, when the input names one (VCS reference, download URL)."""
    where: str = ""
    """Where the input describes it (`sbom.json: $.components[3]`), for messages."""


def string_of(value: object) -> str | None:
    """`value` when a JSON value is a string, else None."""
    return value if isinstance(value, str) else None


def list_of(value: object) -> list[Any]:
    """`value` when a JSON value is an array, else an empty list."""
    return value if isinstance(value, list) else []


def text_of(value: object) -> str | None:
    """`value` when a JSON value is a non-empty string, else None."""
    return string_of(value) or None


def cwe_ids(values: Iterable[object]) -> tuple[str, ...]:
    """The CWE ids (`CWE-79`) among the values, each once, in order."""
    return tuple(dict.fromkeys(v for v in values if isinstance(v, str) and v.startswith("CWE-")))


def default_ref(name: str, version: str | None) -> str:
    """The ref of a component its input gives none for: `name@version`, or its name."""
    return f"{name}@{version}" if version else name


@dataclass(frozen=True, slots=True)
class Inventory:
    """The components one input file (or a request's purls) describes."""

    source: str
    """The file name, or the name of a request's purls (`ScanFields.purl_source`:
    `--purl` on the command line, `purls` in `POST /api/scan`, `purls typed in` on `/scan`)."""
    format: str
    """`cyclonedx-json`, `cyclonedx-xml`, `spdx-json`, `spdx-tag-value`, `spdx3-json`,
    `slsa-provenance`, `requirements`, `poetry-lock`, `uv-lock`, `package-lock`, `purl`."""
    components: tuple[Component, ...]
    notes: tuple[str, ...] = ()
    """Facts a reader should know (an attestation read without verifying its signature)."""
    verified: bool | None = None
    """For attestations: whether a signature was verified (scanning never verifies one:
    `False`); `None` for inputs that carry no signature."""
    document: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    """The CycloneDX BOM as read (JSON), kept to write it back with vulnerabilities."""


@dataclass(frozen=True, slots=True)
class Identification:
    """The CPE names a component was identified as, how, and how sure that is."""

    cpes: tuple[str, ...]
    identified_by: str
    """One of `IDENTIFIED_BY`."""
    confidence: float
    """0 to 1: 1.0 for a CPE the input gives, less for inferred names (docs/scan.md)."""
    reason: str
    osv_package: tuple[str, str] | None = None
    """(ecosystem, name) of OSV records the purl names, when some do: the component is
    then matched against them too (an exact match: confidence 1.0)."""


@dataclass(frozen=True, slots=True)
class FindingSource(_JsonFields):
    """Where a finding comes from: a source, its record, and the rule that matched."""

    source: str
    """`nvd`, `osv`, `cve5` (a CNA's CVE 5 record) or `cisa-adp` (CISA's ADP container)."""
    id: str
    """The record's id in that source (CVE-..., GHSA-..., PYSEC-...)."""
    rule: str
    """What matched: NVD's match criteria id, the OSV range, the JSON path of a CVE 5
    `affected[]` entry."""

    JSON_KEYS = (("source", "source"), ("id", "id"), ("rule", "rule"))


@dataclass(frozen=True, slots=True)
class Cvss(_JsonFields):
    version: str
    base_score: float
    vector: str

    JSON_KEYS = (("version", "version"), ("base_score", "baseScore"), ("vector", "vector"))


@dataclass(frozen=True, slots=True)
class Epss(_JsonFields):
    """FIRST's EPSS score of a CVE: the probability of exploitation in the next 30 days."""

    score: float
    percentile: float
    date: str

    JSON_KEYS = (("score", "score"), ("percentile", "percentile"), ("date", "date"))


@dataclass(frozen=True, slots=True)
class KevDetail(_JsonFields):
    """What CISA's KEV catalogue says of a known exploited CVE, where known."""

    date_added: str | None
    due_date: str | None = None
    ransomware: str | None = None
    """`knownRansomwareCampaignUse`: `Known` or `Unknown`."""

    JSON_KEYS = (
        ("date_added", "dateAdded"),
        ("due_date", "dueDate"),
        ("ransomware", "knownRansomwareCampaignUse"),
    )


@dataclass(frozen=True, slots=True)
class Vulnerability:
    """A CVE that affects a component (or would, on a platform the input does not list)."""

    id: str
    severity: str | None
    cvss: Cvss | None
    kev: bool
    cwes: tuple[str, ...]
    match_criteria_id: str | None
    """The vulnerable criteria the component's CPE name hit."""
    fixed_in: str | None
    """The first version outside the hit range (its `versionEndExcluding`), if any."""
    conditional: bool
    """True when a configuration holds only with something the input does not list (an
    AND node's running-on platform): reported, not counted as affected."""
    vex: Assessment | None = None
    """What VEX says of it (`assay.audit.vex`): `not_affected` and `fixed` fail no rule."""
    epss: Epss | None = None
    kev_detail: KevDetail | None = None
    aliases: tuple[str, ...] = ()
    """The vulnerability's other ids (GHSA, PYSEC, GO, RUSTSEC, ...): `id` is the CVE
    where there is one."""
    sources: tuple[FindingSource, ...] = ()
    rated_by: str | None = None
    """Whose rating `severity` and `cvss` are (`assay.audit.severity.RATING_SOURCES`)."""

    @property
    def epss_score(self) -> float | None:
        return None if self.epss is None else self.epss.score

    @property
    def source_names(self) -> tuple[str, ...]:
        return tuple(source.source for source in self.sources)

    @property
    def severity_rank(self) -> int:
        return SEVERITY_ORDER.get(self.severity or "", -1)

    @property
    def base_score(self) -> float | None:
        return None if self.cvss is None else self.cvss.base_score

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity,
            "cvss": None if self.cvss is None else self.cvss.to_dict(),
            "kev": self.kev,
            "cwes": list(self.cwes),
            "matchCriteriaId": self.match_criteria_id,
            "fixedIn": self.fixed_in,
            "conditional": self.conditional,
            **({"vex": self.vex.to_dict()} if self.vex is not None else {}),
            "kevDetail": None if self.kev_detail is None else self.kev_detail.to_dict(),
            "epss": None if self.epss is None else self.epss.to_dict(),
            "aliases": list(self.aliases),
            "sources": [source.to_dict() for source in self.sources],
        }


@dataclass(frozen=True, slots=True)
class ComponentResult:
    """An identified component and what is known to be wrong with it."""

    component: Component
    identification: Identification
    vulnerabilities: tuple[Vulnerability, ...]
    source: str
    """The input it came from."""

    def to_dict(self, *, vulnerabilities: bool = True) -> dict[str, Any]:
        """The component's entry of the JSON contract (without `vulnerabilities` when
        asked: a writer that streams them adds them last, where they belong)."""
        component = self.component
        entry: dict[str, Any] = {
            "ref": component.ref,
            "name": component.name,
            "version": component.version,
            "purl": component.purl,
            "cpes": list(self.identification.cpes),
            "identifiedBy": self.identification.identified_by,
            "confidence": self.identification.confidence,
            "osvPackage": _package(self.identification.osv_package),
        }
        if vulnerabilities:
            entry["vulnerabilities"] = [v.to_dict() for v in self.vulnerabilities]
        return entry


def _package(package: tuple[str, str] | None) -> dict[str, str] | None:
    return None if package is None else {"ecosystem": package[0], "name": package[1]}


@dataclass(frozen=True, slots=True)
class Unidentified:
    """A component no CPE name could be found for (or only below the minimum confidence)."""

    component: Component
    reason: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        component = self.component
        return {
            "ref": component.ref,
            "name": component.name,
            "version": component.version,
            "purl": component.purl,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """Which data a scan was answered from."""

    generation: int | None
    """The store's data generation (it grows with every write), `None` for a remote API."""
    last_sync: str | None
    """When a mirror last completed a sync (UTC, `...Z`), `None` if never (imported only)."""
    cve_count: int | None = None
    url: str = ""
    last_import: str | None = None
    """When an import into the store last finished (UTC, `...Z`), `None` if unknown."""
    osv_count: int | None = None
    """OSV records the store holds (`None`: a source without OSV records)."""
    sources: tuple[str, ...] = ()
    """The sources a scan read (`nvd`, `osv`, ...)."""

    def age_days(self, now: datetime) -> float | None:
        """Days from the last completed sync to `now` (None: never synced, or unreadable)."""
        if not self.last_sync:
            return None
        try:
            moment = datetime.fromisoformat(self.last_sync.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return (now - moment).total_seconds() / 86400

    def to_dict(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "lastSync": self.last_sync,
            "sources": list(self.sources),
        }


@dataclass(frozen=True, slots=True)
class InputSummary(_JsonFields):
    source: str
    format: str
    components: int
    verified: bool | None
    notes: tuple[str, ...]

    JSON_KEYS = (
        ("source", "file"),
        ("format", "format"),
        ("components", "components"),
        ("verified", "signatureVerified"),
        ("notes", "notes"),
    )


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Every component of the inputs, identified and matched, or listed as unidentified."""

    components: tuple[ComponentResult, ...]
    unidentified: tuple[Unidentified, ...]
    store: SourceStatus
    inputs: tuple[InputSummary, ...] = ()

    @property
    def findings(self) -> list[tuple[ComponentResult, Vulnerability]]:
        return [(c, v) for c in self.components for v in c.vulnerabilities]

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract (docs/scan.md)."""
        return {
            "components": [c.to_dict() for c in self.components],
            "unidentified": [u.to_dict() for u in self.unidentified],
            "store": self.store.to_dict(),
            "inputs": [i.to_dict() for i in self.inputs],
        }
