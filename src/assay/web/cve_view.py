"""One NVD CVE record, arranged for its page: `cve_view(record) -> CveView`.

Pure. Reads the NVD API 2.0 `cve` object as the store serves it; absent fields are
empty, never an error (records from 1999 and from last week differ in what they carry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.audit.severity import choose_severity, nvd_ratings
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
    pieces: list[str] = []
    for key, word in (
        ("versionStartIncluding", "including"),
        ("versionStartExcluding", "excluding"),
    ):
        if key in match:
            pieces.append(f"from {_text(match[key])} ({word})")
    for key, word in (("versionEndIncluding", "including"), ("versionEndExcluding", "excluding")):
        if key in match:
            pieces.append(f"up to {_text(match[key])} ({word})")
    return " ".join(pieces)


def _metric(label: str, entry: dict[str, Any]) -> MetricView:
    data = _dict(entry.get("cvssData"))
    score = data.get("baseScore")
    severity = _text(data.get("baseSeverity") or entry.get("baseSeverity"))
    vector = _text(data.get("vectorString"))
    details: list[tuple[str, str]] = []
    for key, name in (
        ("exploitabilityScore", "Exploitability score"),
        ("impactScore", "Impact score"),
    ):
        if key in entry:
            details.append((name, _text(entry[key])))
    for key, name in (
        ("acInsufInfo", "Insufficient information"),
        ("obtainAllPrivilege", "Obtains all privileges"),
        ("obtainUserPrivilege", "Obtains user privileges"),
        ("obtainOtherPrivilege", "Obtains other privileges"),
        ("userInteractionRequired", "User interaction required"),
    ):
        if entry.get(key) is True:
            details.append((name, "yes"))
    return MetricView(
        label=label,
        source=_text(entry.get("source")),
        kind=_text(entry.get("type")),
        score=float(score) if isinstance(score, int | float) else None,
        severity=severity,
        vector=vector,
        parts=explain_vector(vector) if vector else [],
        details=details,
    )


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


def cve_view(record: dict[str, Any]) -> CveView:
    descriptions = [
        (_text(d.get("lang")), _text(d.get("value")))
        for d in map(_dict, _list(record.get("descriptions")))
    ]
    english = next((text for lang, text in descriptions if lang == "en"), "")
    view = CveView(
        id=_text(record.get("id")),
        status=_text(record.get("vulnStatus")),
        source=_text(record.get("sourceIdentifier")),
        published=_text(record.get("published")),
        last_modified=_text(record.get("lastModified")),
        description=english or (descriptions[0][1] if descriptions else ""),
        other_descriptions=[(lang, text) for lang, text in descriptions if lang != "en"],
    )
    for tag in map(_dict, _list(record.get("cveTags"))):
        view.tags.extend(_text(t) for t in _list(tag.get("tags")))
    metrics = _dict(record.get("metrics"))
    for key, label in METRIC_KEYS:
        view.metrics.extend(_metric(label, _dict(entry)) for entry in _list(metrics.get(key)))
    chosen = choose_severity(nvd_ratings(record))
    if chosen is not None:
        view.headline_index = next(
            (
                index
                for index, metric in enumerate(view.metrics)
                if metric.label == f"CVSS {chosen.version}"
                and metric.vector == chosen.vector
                and metric.source == chosen.source
            ),
            None,
        )
    for weakness in map(_dict, _list(record.get("weaknesses"))):
        for description in map(_dict, _list(weakness.get("description"))):
            view.weaknesses.append(
                (
                    _text(description.get("value")),
                    _text(weakness.get("source")),
                    _text(weakness.get("type")),
                )
            )
    view.references = [
        Reference(
            url=_text(ref.get("url")),
            source=_text(ref.get("source")),
            tags=[_text(tag) for tag in _list(ref.get("tags"))],
        )
        for ref in map(_dict, _list(record.get("references")))
    ]
    if "cisaExploitAdd" in record:
        view.kev = Kev(
            name=_text(record.get("cisaVulnerabilityName")),
            added=_text(record.get("cisaExploitAdd")),
            due=_text(record.get("cisaActionDue")),
            action=_text(record.get("cisaRequiredAction")),
        )
    view.configurations = [_configuration(_dict(c)) for c in _list(record.get("configurations"))]
    view.vendor_comments = [
        (_text(c.get("organization")), _text(c.get("comment")))
        for c in map(_dict, _list(record.get("vendorComments")))
    ]
    return view
