"""What the store indexes about one CVE record: `cve_facts(obj, where) -> CveFacts`.

Pure. Checks the fields every filter relies on (reporting the JSON path of anything
malformed), and derives the facets, CPE criteria rows and search text that let each
filter be answered from an index. The record itself is kept as NVD-encoded bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from assay.errors import InputError
from assay.nvd import _fields as f
from assay.nvd.cpe import parse_cpe
from assay.nvd.dates import normalize_record_timestamp
from assay.nvd.versions import version_key

CVE_ID = re.compile(r"CVE-\d{4}-\d{4,19}")
MAX_RECORD_BYTES = 16 * 1024 * 1024  # the largest real records (kernel configurations) are ~2 MB

# Reference URLs that stand for NVD's hasCertAlerts / hasCertNotes / hasOval flags: the
# JSON carries no such field, so the flags are derived from where the references point.
CERT_ALERT_MARKERS = (
    "us-cert.gov/ncas/alerts",
    "cisa.gov/news-events/alerts",
    "cisa.gov/uscert/ncas/alerts",
)
CERT_NOTE_MARKERS = ("kb.cert.org/vuls",)
OVAL_MARKERS = ("oval.mitre.org", "oval.cisecurity.org")

V3_METRIC_KEYS = ("cvssMetricV31", "cvssMetricV30")


# Named tuples rather than dataclasses: a bulk import hashes millions of criteria and
# hands every CVE's facts from its reader process to the writer, and tuples hash,
# compare and pickle in C (a frozen dataclass pickles through Python code, 15 us apiece).
class Criteria(NamedTuple):
    """One `cpeMatch` entry, in the normalized form the store indexes."""

    vulnerable: bool
    components: tuple[str, ...]  # the 11 CPE components, lower-case
    version_key: bytes | None  # for a literal version
    start_key: bytes | None
    start_inclusive: bool
    end_key: bytes | None
    end_inclusive: bool
    match_criteria_id: str | None
    identity: bytes  # `criteria_identity` of the fields above: what the stores key it by


class CveFacts(NamedTuple):
    cve_id: str
    published: str
    last_modified: str
    vuln_status: str
    rejected: bool
    kev_added: str | None
    search_text: str
    facets: tuple[tuple[str, str], ...]  # (kind, value), each pair once
    criteria: tuple[Criteria, ...]
    record: bytes


def cve_facts(obj: Any, where: str = "$") -> CveFacts:
    """Check one CVE object (the value under `cve`) and derive what the store indexes."""
    if not isinstance(obj, dict):
        raise InputError(where, f"expected a CVE object, found {f.kind(obj)}")
    cve_id = f.string(obj, "id", where)
    if not CVE_ID.fullmatch(cve_id):
        raise InputError(f"{where}.id", f"expected a CVE id (CVE-YYYY-NNNN), found {cve_id!r}")
    published = _timestamp(obj, "published", where)
    last_modified = _timestamp(obj, "lastModified", where)
    vuln_status = obj.get("vulnStatus", "")
    if not isinstance(vuln_status, str):
        raise InputError(f"{where}.vulnStatus", f"expected a string, found {f.kind(vuln_status)}")
    english = _english(obj, where)
    rejected = vuln_status == "Rejected" or any(text.startswith("** REJECT **") for text in english)
    if "metrics" not in obj:
        # NVD always emits `metrics` (nvdlib fails without it); records from older
        # sources may lack it.
        obj = {**obj, "metrics": {}}
    record = f.record_bytes(obj, where, MAX_RECORD_BYTES)
    return CveFacts(
        cve_id=cve_id,
        published=published,
        last_modified=last_modified,
        vuln_status=vuln_status,
        rejected=rejected,
        kev_added=_kev_added(obj, where),
        search_text="\n".join(english),
        facets=tuple(dict.fromkeys(map(_shared_facet, _facets(obj, where)))),
        criteria=_criteria(obj, where),
        record=record,
    )


def _english(obj: dict[str, Any], where: str) -> list[str]:
    """The English descriptions of a CVE."""
    descriptions = obj.get("descriptions", [])
    if not isinstance(descriptions, list):
        raise InputError(
            f"{where}.descriptions", f"expected an array, found {f.kind(descriptions)}"
        )
    return [
        d["value"]
        for d in descriptions
        if isinstance(d, dict) and d.get("lang") == "en" and isinstance(d.get("value"), str)
    ]


def _kev_added(obj: dict[str, Any], where: str) -> str | None:
    """The day CISA added the CVE to its KEV catalog, as stored (midnight UTC)."""
    added = obj.get("cisaExploitAdd")
    if not isinstance(added, str | None):
        raise InputError(f"{where}.cisaExploitAdd", f"expected a date, found {f.kind(added)}")
    return f"{added[:10]}T00:00:00.000" if added else None


# Facets repeat across records (a few thousand distinct values): one tuple each, so a
# batch handed to another process carries each once, and the writer holds each once.
MAX_SHARED_FACETS = 50_000
_SHARED_FACETS: dict[tuple[str, str], tuple[str, str]] = {}


def _shared_facet(facet: tuple[str, str]) -> tuple[str, str]:
    shared = _SHARED_FACETS.get(facet)
    if shared is None:
        if len(_SHARED_FACETS) >= MAX_SHARED_FACETS:
            _SHARED_FACETS.clear()
        shared = _SHARED_FACETS[facet] = facet
    return shared


def _facets(obj: dict[str, Any], where: str) -> Iterator[tuple[str, str]]:
    sources: set[str] = set()
    _add_source(sources, obj.get("sourceIdentifier"))
    yield from _tag_facets(obj, sources)
    yield from _cwe_facets(obj, sources)
    yield from _reference_facets(obj, sources)
    metrics = obj.get("metrics")
    if not isinstance(metrics, dict | None):
        raise InputError(f"{where}.metrics", f"expected an object, found {f.kind(metrics)}")
    yield from _metric_facets(metrics or {}, sources)
    for source in sorted(sources):
        yield "source", source


def _tag_facets(obj: dict[str, Any], sources: set[str]) -> Iterator[tuple[str, str]]:
    for tag_set in _list(obj, "cveTags"):
        if isinstance(tag_set, dict):
            _add_source(sources, tag_set.get("sourceIdentifier"))
            for tag in tag_set.get("tags") or ():
                if isinstance(tag, str):
                    yield "tag", tag.lower()


def _cwe_facets(obj: dict[str, Any], sources: set[str]) -> Iterator[tuple[str, str]]:
    for weakness in _list(obj, "weaknesses"):
        if isinstance(weakness, dict):
            _add_source(sources, weakness.get("source"))
            for description in weakness.get("description") or ():
                if isinstance(description, dict) and isinstance(description.get("value"), str):
                    yield "cwe", description["value"].upper()


def _reference_facets(obj: dict[str, Any], sources: set[str]) -> Iterator[tuple[str, str]]:
    urls: list[str] = []
    for reference in _list(obj, "references"):
        if isinstance(reference, dict):
            _add_source(sources, reference.get("source"))
            urls.append(str(reference.get("url", "")))
    # One search of all the URLs at once (a newline never occurs inside a marker).
    linked = "\n".join(urls).lower()
    for kind, markers in (
        ("certAlert", CERT_ALERT_MARKERS),
        ("certNote", CERT_NOTE_MARKERS),
        ("oval", OVAL_MARKERS),
    ):
        if any(marker in linked for marker in markers):
            yield kind, "1"


_METRIC_KEYS = (("V2", ("cvssMetricV2",)), ("V3", V3_METRIC_KEYS), ("V4", ("cvssMetricV40",)))


def _metric_facets(metrics: dict[str, Any], sources: set[str]) -> Iterator[tuple[str, str]]:
    for version, keys in _METRIC_KEYS:
        for key in keys:
            for entry in metrics.get(key) or ():
                if isinstance(entry, dict):
                    _add_source(sources, entry.get("source"))
                    yield from _cvss_facets(version, entry)


def _cvss_facets(version: str, entry: dict[str, Any]) -> Iterator[tuple[str, str]]:
    data = entry.get("cvssData")
    if not isinstance(data, dict):
        data = {}
    # v2 keeps baseSeverity beside cvssData (inside it in 2022 beta records).
    severity = data.get("baseSeverity") or entry.get("baseSeverity")
    if isinstance(severity, str):
        yield f"sev{version}", severity.upper()
    vector = data.get("vectorString")
    normalized = cvss_vector(vector) if isinstance(vector, str) else ""
    if normalized:
        yield f"vec{version}", normalized


def cvss_vector(vector: str) -> str:
    """A vector as the store indexes it: its `METRIC:VALUE` pairs, upper-case, in order,
    without the `CVSS:3.1` prefix. A partial vector query (`cvssV3Metrics=AV:N/AC:L`)
    asks for the vectors holding each of its pairs."""
    return "/".join(
        pair for pair in vector.upper().split("/") if ":" in pair and not pair.startswith("CVSS:")
    )


def _add_source(sources: set[str], value: object) -> None:
    if isinstance(value, str) and value:
        sources.add(value)


def _criteria(obj: dict[str, Any], where: str) -> tuple[Criteria, ...]:
    found: list[Criteria] = []
    for c_index, configuration in enumerate(_list(obj, "configurations")):
        if not isinstance(configuration, dict):
            continue
        for n_index, node in enumerate(configuration.get("nodes") or ()):
            if not isinstance(node, dict):
                continue
            for m_index, match in enumerate(node.get("cpeMatch") or ()):
                # A criteria seen before needs no path (only a problem names it).
                criteria = _remembered(match)
                if criteria is None:
                    path = f"{where}.configurations[{c_index}].nodes[{n_index}].cpeMatch[{m_index}]"
                    criteria = criteria_from_json(match, path)
                found.append(criteria)
    return tuple(found)


# Criteria recur across records (NVD shares one match criteria among every CVE it fits,
# ~4 uses each): the normalized form of the recent distinct ones is kept, up to this many
# (~1 KB each); when full, it starts again (a bulk load meets a criteria's uses close
# together: a whole NVD has ~700,000 distinct ones, a year's feed ~30,000).
MAX_REMEMBERED_CRITERIA = 100_000
_REMEMBERED: dict[tuple[Any, ...], Criteria] = {}


def _remembered_key(match: dict[str, Any]) -> tuple[Any, ...]:
    get = match.get
    return (
        get("criteria"),
        get("vulnerable"),
        get("versionStartIncluding"),
        get("versionStartExcluding"),
        get("versionEndIncluding"),
        get("versionEndExcluding"),
        get("matchCriteriaId"),
    )


def _remembered(match: Any) -> Criteria | None:
    if not isinstance(match, dict):
        return None
    try:
        return _REMEMBERED.get(_remembered_key(match))
    except TypeError:  # an unhashable (malformed) value: checked when parsed
        return None


def criteria_from_json(match: Any, path: str) -> Criteria:
    """Normalize one `cpeMatch` item (or match-criteria record) for indexing."""
    if not isinstance(match, dict):
        raise InputError(path, f"expected a cpeMatch object, found {f.kind(match)}")
    remembered = _remembered(match)
    if remembered is not None:
        return remembered
    criteria = _criteria_from_json(match, path)
    key = _remembered_key(match)
    try:
        hash(key)
    except TypeError:
        return criteria
    if len(_REMEMBERED) >= MAX_REMEMBERED_CRITERIA:
        _REMEMBERED.clear()
    _REMEMBERED[key] = criteria
    return criteria


def make_criteria(
    *,
    vulnerable: bool,
    components: tuple[str, ...],
    version_key: bytes | None,
    start_key: bytes | None,
    start_inclusive: bool,
    end_key: bytes | None,
    end_inclusive: bool,
    match_criteria_id: str | None,
) -> Criteria:
    """A `Criteria` with its identity worked out (once, where the record is checked:
    writers then remember a bulk load's criteria by 16 bytes rather than by value)."""
    return Criteria(
        vulnerable,
        components,
        version_key,
        start_key,
        start_inclusive,
        end_key,
        end_inclusive,
        match_criteria_id,
        criteria_identity(
            components,
            start=(start_key, start_inclusive),
            end=(end_key, end_inclusive),
            match_criteria_id=match_criteria_id,
        ),
    )


def criteria_identity(
    components: tuple[str, ...],
    *,
    start: tuple[bytes | None, bool],
    end: tuple[bytes | None, bool],
    match_criteria_id: str | None,
) -> bytes:
    """16 bytes that name a criteria by everything but `vulnerable` (which belongs to its
    use in one configuration): stores keep each distinct criteria once."""
    (start_key, start_inclusive), (end_key, end_inclusive) = start, end
    parts = [
        *components,
        start_key.hex() if start_key is not None else "",
        "1" if start_inclusive else "0",
        end_key.hex() if end_key is not None else "",
        "1" if end_inclusive else "0",
        match_criteria_id or "",
    ]
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).digest()


def _criteria_from_json(match: dict[str, Any], path: str) -> Criteria:
    text = match.get("criteria")
    if not isinstance(text, str):
        raise InputError(f"{path}.criteria", f"expected a CPE 2.3 string, found {f.kind(text)}")
    try:
        cpe = parse_cpe(text, partial=False)
    except InputError as error:
        raise InputError(f"{path}.criteria", error.reason) from None
    components = tuple(cpe.components)
    literal = components[3] not in ("*", "-")
    start_key, start_inclusive = _bound(
        match, "versionStartIncluding", "versionStartExcluding", path
    )
    end_key, end_inclusive = _bound(match, "versionEndIncluding", "versionEndExcluding", path)
    criteria_id = match.get("matchCriteriaId")
    return make_criteria(
        vulnerable=bool(match.get("vulnerable", True)),
        components=components,
        version_key=version_key(components[3]) if literal else None,
        start_key=start_key,
        start_inclusive=start_inclusive,
        end_key=end_key,
        end_inclusive=end_inclusive,
        match_criteria_id=criteria_id.upper() if isinstance(criteria_id, str) else None,
    )


def _bound(
    match: dict[str, Any], including: str, excluding: str, path: str
) -> tuple[bytes | None, bool]:
    for name, inclusive in ((including, True), (excluding, False)):
        value = match.get(name)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise InputError(f"{path}.{name}", f"expected a version string, found {f.kind(value)}")
        return version_key(value), inclusive
    return None, False


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _timestamp(obj: dict[str, Any], key: str, where: str) -> str:
    text = f.string(obj, key, where)
    try:
        return normalize_record_timestamp(text)
    except InputError:
        raise InputError(
            f"{where}.{key}", f"expected a timestamp like 2023-05-04T19:40:31.363, found {text!r}"
        ) from None
