"""One NVD CVE record, arranged for its page: `cve_view(record) -> CveView`.

Pure. Reads the NVD API 2.0 `cve` object as the store serves it; absent fields are
empty, never an error (records from 1999 and from last week differ in what they carry).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from assay.audit.severity import Rating, choose_severity, nvd_ratings
from assay.web.cvss import MetricPart, explain_vector

METRIC_KEYS = (
    ("cvssMetricV40", "CVSS 4.0"),
    ("cvssMetricV31", "CVSS 3.1"),
    ("cvssMetricV30", "CVSS 3.0"),
    ("cvssMetricV2", "CVSS 2.0"),
)
SEVERITY_ORDER = ("CRITICAL", "HIGH", "MEDIUM", "LOW", "NONE")


@dataclass(frozen=True, slots=True)
class MetricView:
    label: str  # "CVSS 3.1"
    source: str
    kind: str  # Primary / Secondary
    score: float | None
    severity: str
    vector: str
    parts: list[MetricPart]
    details: list[tuple[str, str]]  # exploitability and impact sub-scores, v2 flags


@dataclass(frozen=True, slots=True)
class MatchView:
    criteria: str
    criteria_id: str
    vulnerable: bool
    range_text: str  # "from 1.0 (including) up to 2.0 (excluding)", or ""


@dataclass(frozen=True, slots=True)
class NodeView:
    operator: str  # AND / OR
    negate: bool
    matches: list[MatchView]


@dataclass(frozen=True, slots=True)
class ConfigurationView:
    operator: str  # how the nodes combine: AND / OR
    negate: bool
    nodes: list[NodeView]


@dataclass(frozen=True, slots=True)
class Reference:
    url: str
    source: str
    tags: list[str]


@dataclass(frozen=True, slots=True)
class Kev:
    name: str
    added: str
    due: str
    action: str


@dataclass(slots=True)
class CveView:
    id: str
    status: str
    source: str
    published: str
    last_modified: str
    description: str
    other_descriptions: list[tuple[str, str]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    metrics: list[MetricView] = field(default_factory=list)
    weaknesses: list[tuple[str, str, str]] = field(default_factory=list)  # (cwe, source, type)
    references: list[Reference] = field(default_factory=list)
    kev: Kev | None = None
    configurations: list[ConfigurationView] = field(default_factory=list)
    vendor_comments: list[tuple[str, str]] = field(default_factory=list)

    headline_index: int | None = None

    @property
    def headline(self) -> MetricView | None:
        """The metric that gives the severity: `assay.audit.severity`'s choice, the one
        `assay scan` reports."""
        return None if self.headline_index is None else self.metrics[self.headline_index]

    @property
    def criteria_count(self) -> int:
        return sum(len(node.matches) for c in self.configurations for node in c.nodes)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def version_range(match: dict[str, Any]) -> str:
    """The version bounds of one `cpeMatch` entry, in words."""
    return " ".join(
        f"{bound} {_text(match[key])} ({word})"
        for key, bound, word in _VERSION_BOUNDS
        if key in match
    )


# The cpeMatch bounds in the order they are said: (key, "from"/"up to", inclusion).
_VERSION_BOUNDS: Final = (
    ("versionStartIncluding", "from", "including"),
    ("versionStartExcluding", "from", "excluding"),
    ("versionEndIncluding", "up to", "including"),
    ("versionEndExcluding", "up to", "excluding"),
)


def _metric(label: str, entry: dict[str, Any]) -> MetricView:
    data = _dict(entry.get("cvssData"))
    score = data.get("baseScore")
    severity = _text(data.get("baseSeverity") or entry.get("baseSeverity"))
    vector = _text(data.get("vectorString"))
    return MetricView(
        label=label,
        source=_text(entry.get("source")),
        kind=_text(entry.get("type")),
        score=float(score) if isinstance(score, int | float) else None,
        severity=severity,
        vector=vector,
        parts=explain_vector(vector) if vector else [],
        details=_metric_details(entry),
    )


# What a metric says beside its vector: scores shown as given, flags shown when true.
_METRIC_SCORES: Final = (
    ("exploitabilityScore", "Exploitability score"),
    ("impactScore", "Impact score"),
)
_METRIC_FLAGS: Final = (
    ("acInsufInfo", "Insufficient information"),
    ("obtainAllPrivilege", "Obtains all privileges"),
    ("obtainUserPrivilege", "Obtains user privileges"),
    ("obtainOtherPrivilege", "Obtains other privileges"),
    ("userInteractionRequired", "User interaction required"),
)


def _metric_details(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, value) of the scores and true flags a metric entry carries, in that order."""
    scores = [(name, _text(entry[key])) for key, name in _METRIC_SCORES if key in entry]
    flags = [(name, "yes") for key, name in _METRIC_FLAGS if entry.get(key) is True]
    return scores + flags


def _configuration(config: dict[str, Any]) -> ConfigurationView:
    nodes = [
        NodeView(
            operator=_text(node.get("operator")) or "OR",
            negate=node.get("negate") is True,
            matches=[
                MatchView(
                    criteria=_text(match.get("criteria")),
                    criteria_id=_text(match.get("matchCriteriaId")),
                    vulnerable=match.get("vulnerable") is True,
                    range_text=version_range(match),
                )
                for match in map(_dict, _list(node.get("cpeMatch")))
            ],
        )
        for node in map(_dict, _list(config.get("nodes")))
    ]
    return ConfigurationView(
        operator=_text(config.get("operator")) or ("AND" if len(nodes) > 1 else "OR"),
        negate=config.get("negate") is True,
        nodes=nodes,
    )


def _descriptions(record: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """The English description (else the first), and those in other languages."""
    descriptions = [
        (_text(d.get("lang")), _text(d.get("value")))
        for d in map(_dict, _list(record.get("descriptions")))
    ]
    english = next((text for lang, text in descriptions if lang == "en"), "")
    first = descriptions[0][1] if descriptions else ""
    return english or first, [(lang, text) for lang, text in descriptions if lang != "en"]


def _tags(record: dict[str, Any]) -> list[str]:
    return [
        _text(t) for tag in map(_dict, _list(record.get("cveTags"))) for t in _list(tag.get("tags"))
    ]


def _metrics(record: dict[str, Any]) -> list[MetricView]:
    metrics = _dict(record.get("metrics"))
    return [
        _metric(label, _dict(entry))
        for key, label in METRIC_KEYS
        for entry in _list(metrics.get(key))
    ]


def _first_index(
    metrics: list[MetricView], vector: str, rater: str, label: str | None
) -> int | None:
    """Where the metric with this vector, from this rater (and label, if given) stands."""
    return next(
        (
            index
            for index, metric in enumerate(metrics)
            if (label is None or metric.label == label)
            and metric.vector == vector
            and metric.source == rater
        ),
        None,
    )


def _nvd_headline(record: dict[str, Any], metrics: list[MetricView]) -> int | None:
    chosen = choose_severity(nvd_ratings(record))
    if chosen is None or chosen.cvss is None:
        return None
    cvss = chosen.cvss
    return _first_index(metrics, cvss.vector, chosen.rater, f"CVSS {cvss.version}")


def _weaknesses(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (
            _text(description.get("value")),
            _text(weakness.get("source")),
            _text(weakness.get("type")),
        )
        for weakness in map(_dict, _list(record.get("weaknesses")))
        for description in map(_dict, _list(weakness.get("description")))
    ]


def _references(record: dict[str, Any]) -> list[Reference]:
    return [
        Reference(
            url=_text(ref.get("url")),
            source=_text(ref.get("source")),
            tags=[_text(tag) for tag in _list(ref.get("tags"))],
        )
        for ref in map(_dict, _list(record.get("references")))
    ]


def _kev(record: dict[str, Any]) -> Kev | None:
    if "cisaExploitAdd" not in record:
        return None
    return Kev(
        name=_text(record.get("cisaVulnerabilityName")),
        added=_text(record.get("cisaExploitAdd")),
        due=_text(record.get("cisaActionDue")),
        action=_text(record.get("cisaRequiredAction")),
    )


def cve_view(record: dict[str, Any]) -> CveView:
    description, others = _descriptions(record)
    metrics = _metrics(record)
    return CveView(
        id=_text(record.get("id")),
        status=_text(record.get("vulnStatus")),
        source=_text(record.get("sourceIdentifier")),
        published=_text(record.get("published")),
        last_modified=_text(record.get("lastModified")),
        description=description,
        other_descriptions=others,
        tags=_tags(record),
        metrics=metrics,
        weaknesses=_weaknesses(record),
        references=_references(record),
        kev=_kev(record),
        configurations=[_configuration(_dict(c)) for c in _list(record.get("configurations"))],
        vendor_comments=[
            (_text(c.get("organization")), _text(c.get("comment")))
            for c in map(_dict, _list(record.get("vendorComments")))
        ],
        headline_index=_nvd_headline(record, metrics),
    )


# -- every source side by side (CVE 5 containers, KEV, EPSS, OSV) -----------------------

KNOWN_ORGS: dict[str, str] = {
    "134c704f-9b21-4f2e-91b3-4a467353bcc0": "CISA ADP Vulnrichment",
    "af854a3a-2127-422b-91ae-364da2661108": "CVE Program Container",
    "1bb62c36-49e3-4200-9d77-64a1400537cc": "Go Project (CNA)",
    "a0819718-46f1-4df5-94e2-005712e83aaa": "GitHub (CNA)",
}
"""Readable names of the organisations whose UUIDs CVE 5 containers carry."""

CWE_NAMES: dict[str, str] = {
    "CWE-20": "Improper Input Validation",
    "CWE-22": "Path Traversal",
    "CWE-77": "Command Injection",
    "CWE-78": "OS Command Injection",
    "CWE-79": "Cross-site Scripting",
    "CWE-89": "SQL Injection",
    "CWE-94": "Code Injection",
    "CWE-119": "Improper Restriction of Operations within the Bounds of a Memory Buffer",
    "CWE-125": "Out-of-bounds Read",
    "CWE-190": "Integer Overflow or Wraparound",
    "CWE-200": "Exposure of Sensitive Information to an Unauthorized Actor",
    "CWE-269": "Improper Privilege Management",
    "CWE-287": "Improper Authentication",
    "CWE-306": "Missing Authentication for Critical Function",
    "CWE-352": "Cross-Site Request Forgery",
    "CWE-400": "Uncontrolled Resource Consumption",
    "CWE-416": "Use After Free",
    "CWE-434": "Unrestricted Upload of File with Dangerous Type",
    "CWE-476": "NULL Pointer Dereference",
    "CWE-502": "Deserialization of Untrusted Data",
    "CWE-674": "Uncontrolled Recursion",
    "CWE-787": "Out-of-bounds Write",
    "CWE-798": "Use of Hard-coded Credentials",
    "CWE-862": "Missing Authorization",
    "CWE-863": "Incorrect Authorization",
    "CWE-918": "Server-Side Request Forgery",
}
"""Names of the most frequent CWEs (MITRE's Top 25 and a few more); a CVE 5 record's own
`problemTypes` description names the others."""


@dataclass(frozen=True, slots=True)
class OsvAdvisory:
    """An OSV advisory (GHSA, PYSEC, GO, RUSTSEC, ...) that names the CVE as an alias."""

    id: str
    summary: str
    url: str


@dataclass(frozen=True, slots=True)
class AffectedView:
    what: str  # "vendor product", or the package
    cpes: list[str]
    package: str
    versions: list[str]  # each range in words
    default_status: str


@dataclass(frozen=True, slots=True)
class ContainerView:
    role: str  # CNA / ADP
    name: str
    org_id: str
    updated: str
    title: str
    metrics: list[MetricView]
    weaknesses: list[tuple[str, str]]  # (CWE id, name)
    affected: list[AffectedView]
    ssvc: list[tuple[str, str]]  # (decision point, value)
    kev_added: str | None
    references: int


@dataclass(slots=True)
class SourcesView:
    """What every source says of one CVE, for the page's side-by-side section."""

    cve_id: str
    containers: list[ContainerView] = field(default_factory=list)
    kev: dict[str, Any] | None = None  # the KEV catalogue entry (its JSON members)
    epss: tuple[float, float, str, str] | None = None  # score, percentile, date, model
    osv: list[OsvAdvisory] = field(default_factory=list)

    @property
    def links(self) -> list[tuple[str, str]]:
        return [
            ("NVD", f"https://nvd.nist.gov/vuln/detail/{self.cve_id}"),
            ("cve.org", f"https://www.cve.org/CVERecord?id={self.cve_id}"),
            ("osv.dev", f"https://osv.dev/vulnerability/{self.cve_id}"),
        ]


def cwe_name(cwe: str, described: str = "") -> str:
    """A CWE's name: the table's, else what a record wrote (`CWE-502: Deserialization...`)."""
    if cwe in CWE_NAMES:
        return CWE_NAMES[cwe]
    return described.split(":", 1)[1].strip() if described.startswith(f"{cwe}:") else described


def _version_words(entry: Any) -> str:
    pieces = [entry.version]
    if entry.less_than:
        pieces = [f"from {entry.version}", f"before {entry.less_than}"]
    elif entry.less_than_or_equal:
        pieces = [f"from {entry.version}", f"through {entry.less_than_or_equal}"]
    text = " ".join(pieces) + f": {entry.status}"
    for at, status in entry.changes:
        text += f"; from {at}: {status}"
    return text


def _affected(affected: Any) -> AffectedView:
    package = f"{affected.collection_url} {affected.package_name}" if affected.package_name else ""
    return AffectedView(
        what=" ".join(p for p in (affected.vendor, affected.product) if p and p != "n/a"),
        cpes=list(affected.cpes),
        package=affected.package_url or package,
        versions=[_version_words(v) for v in affected.versions],
        default_status=affected.default_status,
    )


def _ssvc(ssvc: Any) -> list[tuple[str, str]]:
    if ssvc is None:
        return []
    return [
        (label, value)
        for label, value in (
            ("Exploitation", ssvc.exploitation),
            ("Automatable", ssvc.automatable),
            ("Technical impact", ssvc.technical_impact),
        )
        if value
    ]


def _container_metric(cvss: Any, source: str, kind: str) -> MetricView:
    from assay.cve5.record import CVSS_KEYS

    labels = {version: f"CVSS {version}" for _, version in CVSS_KEYS}
    return MetricView(
        label=labels[cvss.version],
        source=source,
        kind=kind,
        score=cvss.base_score,
        severity=_text(cvss.severity),
        vector=cvss.vector,
        parts=explain_vector(cvss.vector),
        details=[],
    )


def _container(container: Any) -> ContainerView:
    name = KNOWN_ORGS.get(container.org_id) or container.short_name or container.org_id
    role = container.kind.upper()
    return ContainerView(
        role=role,
        name=name,
        org_id=container.org_id,
        updated=_text(container.date_updated),
        title=_text(container.title),
        metrics=[_container_metric(c, name, role) for c in container.cvss],
        weaknesses=[(cwe, cwe_name(cwe, text)) for cwe, text in container.cwes if cwe],
        affected=[_affected(a) for a in container.affected],
        ssvc=_ssvc(container.ssvc),
        kev_added=None if container.kev is None else _text(container.kev.date_added),
        references=len(container.references),
    )


def sources_view(
    cve_id: str,
    record: Any | None,
    *,
    kev: dict[str, Any] | None = None,
    epss: tuple[float, float, str, str] | None = None,
    osv: Sequence[OsvAdvisory] = (),
) -> SourcesView:
    """The side-by-side view: the CVE 5 record's containers (`assay.cve5.record.CveRecord`,
    CNA first), the KEV catalogue entry, the EPSS score and the OSV advisories."""
    view = SourcesView(cve_id, kev=kev, epss=epss, osv=list(osv))
    if record is not None:
        view.containers = [_container(c) for c in record.containers]
    return view


def osv_advisories(found: Iterable[Any]) -> list[OsvAdvisory]:
    """OSV advisories for the page from what a store's `osv_by_alias` gives: OSV records
    (mappings with `id` and `summary`, or their JSON bytes). Empty when none."""
    import orjson

    advisories: list[OsvAdvisory] = []
    for item in found:
        value = orjson.loads(item) if isinstance(item, bytes | str) else item
        identifier = value.get("id") if isinstance(value, dict) else getattr(value, "id", None)
        if not isinstance(identifier, str):
            continue
        summary = value.get("summary") if isinstance(value, dict) else getattr(value, "summary", "")
        advisories.append(
            OsvAdvisory(identifier, _text(summary), f"https://osv.dev/vulnerability/{identifier}")
        )
    return advisories


def _container_ratings(container: Any, shown: ContainerView) -> list[Rating]:
    from assay.audit.model import Cvss
    from assay.audit.severity import severity_of_score

    origin = "cna" if container.kind == "cna" else "adp"
    return [
        Rating(
            origin,
            c.severity or severity_of_score(c.base_score, c.version),
            Cvss(c.version, c.base_score, c.vector),
            shown.name,
        )
        for c in container.cvss
    ]


def cve5_cve_view(record: Any, sources: SourcesView) -> CveView:
    """The page of a CVE NVD's data does not hold: from its CVE 5 record (`CveRecord`)."""
    view = CveView(
        id=record.cve_id,
        status=f"not in NVD's data ({record.state.lower()} in the CVE List)",
        source=record.assigner_short_name or record.assigner_org_id,
        published=_text(record.date_published),
        last_modified=record.date_updated,
        description=record.cna.description,
    )
    ratings: list[Rating] = []
    for container, shown in zip(record.containers, sources.containers, strict=True):
        view.metrics.extend(shown.metrics)
        ratings.extend(_container_ratings(container, shown))
        view.weaknesses.extend((cwe, shown.name, shown.role) for cwe, _ in shown.weaknesses)
    view.references = [
        Reference(url=url, source=_text(record.assigner_short_name), tags=[])
        for url in record.cna.references
    ]
    chosen = choose_severity(ratings)
    if chosen is not None and chosen.cvss is not None:
        view.headline_index = _first_index(view.metrics, chosen.cvss.vector, chosen.rater, None)
    return view
