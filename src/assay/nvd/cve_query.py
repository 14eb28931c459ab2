"""The CVE API's query string, parsed and checked: `parse_cve_query(pairs) -> CveQuery`.

Pure. Every rule of the NVD error table and of the behaviour notes is enforced here;
a violation raises `QueryError` naming the parameter, which the server answers as NVD
does (404, empty body, `message` header). A `CveQuery` is hashable: the store caches
result lists under it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from assay.errors import InputError, QueryError
from assay.nvd.cpe import Cpe, parse_cpe
from assay.nvd.operations import CVE_TAGS, CVSS_SEVERITIES, OPERATIONS
from assay.nvd.params import (
    PagedQuery,
    RawQuery,
    Window,
    parse_cve_id,
    parse_cve_ids,
    parse_keywords,
    parse_paging,
    printable,
)

MAX_RESULTS_PER_PAGE = OPERATIONS["cves"].max_page

PARAMETERS = OPERATIONS["cves"].wire_names

CWE_ID = re.compile(r"CWE-\d{1,9}|NVD-CWE-Other|NVD-CWE-noinfo", re.IGNORECASE)
SEVERITIES = CVSS_SEVERITIES
# Metric names each CVSS version defines (base, temporal/threat, environmental, supplemental).
CVSS_METRICS = {
    "V2": frozenset(
        ["AV", "AC", "AU", "C", "I", "A", "E", "RL", "RC", "CDP", "TD", "CR", "IR", "AR"]
    ),
    "V3": frozenset(
        [
            "AV",
            "AC",
            "PR",
            "UI",
            "S",
            "C",
            "I",
            "A",
            "E",
            "RL",
            "RC",
            "CR",
            "IR",
            "AR",
            "MAV",
            "MAC",
            "MPR",
            "MUI",
            "MS",
            "MC",
            "MI",
            "MA",
        ]
    ),
    "V4": frozenset(
        [
            "AV",
            "AC",
            "AT",
            "PR",
            "UI",
            "VC",
            "VI",
            "VA",
            "SC",
            "SI",
            "SA",
            "E",
            "CR",
            "IR",
            "AR",
            "MAV",
            "MAC",
            "MAT",
            "MPR",
            "MUI",
            "MVC",
            "MVI",
            "MVA",
            "MSC",
            "MSI",
            "MSA",
            "S",
            "AU",
            "R",
            "V",
            "RE",
            "U",
        ]
    ),
}
METRIC_PAIR = re.compile(r"([A-Za-z]{1,3}):([A-Za-z]{1,2})")


@dataclass(frozen=True, slots=True)
class VersionBound:
    version: str
    inclusive: bool


@dataclass(frozen=True, slots=True)
class CveQuery(PagedQuery):
    """A validated CVE query. Paging is kept apart from the filter (see `filter_key`)."""

    cve_id: str | None = None
    cve_ids: tuple[str, ...] | None = None
    cpe_name: Cpe | None = None
    is_vulnerable: bool = False
    virtual_match: Cpe | None = None
    version_start: VersionBound | None = None
    version_end: VersionBound | None = None
    cve_tag: str | None = None
    cvss_metrics: tuple[str, tuple[str, ...]] | None = None  # ("V3", ("AV:N", "AC:L"))
    cvss_severity: tuple[str, str] | None = None  # ("V3", "HIGH")
    cwe_id: str | None = None
    has_cert_alerts: bool = False
    has_cert_notes: bool = False
    has_kev: bool = False
    has_oval: bool = False
    keywords: tuple[str, ...] = ()
    keyword_exact: bool = False
    kev_window: Window | None = None
    last_mod_window: Window | None = None
    pub_window: Window | None = None
    no_rejected: bool = False
    source_identifier: str | None = None
    results_per_page: int = field(default=MAX_RESULTS_PER_PAGE, kw_only=True)

    @property
    def is_unfiltered(self) -> bool:
        return self.filter_key == _UNFILTERED


_UNFILTERED = CveQuery()


def parse_cve_query(pairs: Iterable[tuple[str, str]]) -> CveQuery:
    """Validate decoded query-string pairs and build a `CveQuery`."""
    raw = RawQuery(pairs, PARAMETERS)

    cpe_name, is_vulnerable, virtual, version_start, version_end = _cpe_filters(raw)
    keywords, keyword_exact = parse_keywords(raw)

    return CveQuery(
        cve_id=parse_cve_id(raw, "cveId"),
        cve_ids=parse_cve_ids(raw),
        cpe_name=cpe_name,
        is_vulnerable=is_vulnerable,
        virtual_match=virtual,
        version_start=version_start,
        version_end=version_end,
        cve_tag=_choice(raw, "cveTag", CVE_TAGS, lower=True),
        cvss_metrics=_cvss_metrics(raw),
        cvss_severity=_cvss_severity(raw),
        cwe_id=_cwe_id(raw),
        has_cert_alerts=raw.flag("hasCertAlerts"),
        has_cert_notes=raw.flag("hasCertNotes"),
        has_kev=raw.flag("hasKev"),
        has_oval=raw.flag("hasOval"),
        keywords=keywords,
        keyword_exact=keyword_exact,
        kev_window=raw.window("kevStartDate", "kevEndDate"),
        last_mod_window=raw.window("lastModStartDate", "lastModEndDate"),
        pub_window=raw.window("pubStartDate", "pubEndDate"),
        no_rejected=raw.flag("noRejected"),
        source_identifier=raw.text("sourceIdentifier"),
        **parse_paging(raw, MAX_RESULTS_PER_PAGE),
    )


_CpeFilters = tuple[Cpe | None, bool, Cpe | None, VersionBound | None, VersionBound | None]


def _cpe_filters(raw: RawQuery) -> _CpeFilters:
    """`cpeName` with `isVulnerable`, or `virtualMatchString` with its version range."""
    cpe_name = _cpe(raw, "cpeName", complete_product=True)
    virtual = _cpe(raw, "virtualMatchString", complete_product=False)
    is_vulnerable = raw.flag("isVulnerable")
    if is_vulnerable and cpe_name is None:
        raise QueryError("isVulnerable", "isVulnerable requires cpeName")
    version_start = _version_bound(raw, "versionStart", "versionStartType")
    version_end = _version_bound(raw, "versionEnd", "versionEndType")
    _check_version_range(virtual, version_start, version_end)
    if cpe_name is not None:
        # NVD: "if both cpeName and virtualMatchString are provided, only cpeName is used".
        return cpe_name, is_vulnerable, None, None, None
    return cpe_name, is_vulnerable, virtual, version_start, version_end


def _check_version_range(
    virtual: Cpe | None, start: VersionBound | None, end: VersionBound | None
) -> None:
    """`versionStart`/`versionEnd` bound a `virtualMatchString` that names no version."""
    if start is None and end is None:
        return
    if virtual is None:
        name = "versionStart" if start else "versionEnd"
        raise QueryError(name, f"{name} requires virtualMatchString")
    if virtual.version != "*":
        raise QueryError(
            "virtualMatchString",
            "virtualMatchString cannot contain a version when versionStart or versionEnd is given",
        )


def _cwe_id(raw: RawQuery) -> str | None:
    value = raw.text("cweId")
    if value is None:
        return None
    if not CWE_ID.fullmatch(value):
        raise QueryError(
            "cweId",
            f"Invalid cweId: expected CWE-N, NVD-CWE-Other or NVD-CWE-noinfo, found '{printable(value)}'",
        )
    return value.upper()


def _choice(raw: RawQuery, name: str, allowed: tuple[str, ...], *, lower: bool) -> str | None:
    value = raw.text(name)
    if value is None:
        return None
    normalized = value.lower() if lower else value.upper()
    if normalized not in allowed:
        raise QueryError(
            name,
            f"Invalid {name}: expected one of {', '.join(allowed)}, found '{printable(value)}'",
        )
    return normalized


def _cvss_version(raw: RawQuery, kind: str) -> str | None:
    """The one CVSS version given a `cvss{V}{kind}` parameter; None when none is."""
    present = [v for v in ("V2", "V3", "V4") if f"cvss{v}{kind}" in raw]
    if len(present) > 1:
        names = " and ".join(f"cvss{v}{kind}" for v in present)
        raise QueryError(f"cvss{present[1]}{kind}", f"{names} cannot be combined")
    return present[0] if present else None


def _cvss_metrics(raw: RawQuery) -> tuple[str, tuple[str, ...]] | None:
    version = _cvss_version(raw, "Metrics")
    if version is None:
        return None
    name = f"cvss{version}Metrics"
    value = raw.text(name)
    assert value is not None
    pairs = _metric_pairs(value, name, version)
    if not pairs:
        raise QueryError(name, f"Invalid {name}: no metrics given")
    return version, tuple(sorted(set(pairs)))


def _metric_pairs(value: str, name: str, version: str) -> list[str]:
    """`AV:N/AC:L` (with or without the `CVSS:3.1/` prefix) as upper-case `AV:N` pairs."""
    parts = [part for part in value.split("/") if part]
    if parts and parts[0].upper().startswith("CVSS:"):
        parts = parts[1:]
    pairs: list[str] = []
    for part in parts:
        match = METRIC_PAIR.fullmatch(part)
        if match is None or match.group(1).upper() not in CVSS_METRICS[version]:
            raise QueryError(
                name, f"Invalid {name}: '{printable(part)}' is not a CVSS {version[1]} metric"
            )
        pairs.append(f"{match.group(1).upper()}:{match.group(2).upper()}")
    return pairs


def _cvss_severity(raw: RawQuery) -> tuple[str, str] | None:
    version = _cvss_version(raw, "Severity")
    if version is None:
        return None
    severity = _choice(raw, f"cvss{version}Severity", SEVERITIES[version], lower=False)
    assert severity is not None
    return version, severity


def _cpe(raw: RawQuery, name: str, *, complete_product: bool) -> Cpe | None:
    value = raw.text(name)
    if value is None:
        return None
    try:
        cpe = parse_cpe(value, partial=True)
    except InputError as error:
        raise QueryError(name, f"Invalid {name}: {error.reason}") from None
    if complete_product:
        for component in ("part", "vendor", "product", "version"):
            if getattr(cpe, component) == "*":
                raise QueryError(name, f"Invalid {name}: the {component} component must not be *")
    return cpe


def _version_bound(raw: RawQuery, value_name: str, type_name: str) -> VersionBound | None:
    value, kind = raw.text(value_name), raw.get(type_name)
    if value is None and kind is None:
        return None
    if value is None:
        raise QueryError(value_name, f"{type_name} requires {value_name}")
    if kind is None:
        raise QueryError(type_name, f"{value_name} requires {type_name}")
    normalized = kind.strip().lower()
    if normalized not in ("including", "excluding"):
        raise QueryError(
            type_name,
            f"Invalid {type_name}: expected including or excluding, found '{printable(kind)}'",
        )
    return VersionBound(value, normalized == "including")
