"""An independent reading of the CVE filters, evaluated directly on JSON records.

The server answers from SQL over derived tables; this evaluates the same rules on the
records themselves (with the pure CPE/version/date functions), so the two can be
compared query by query.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

from assay.nvd.cpe import CriteriaRange, name_matches, parse_cpe, virtual_matches
from assay.nvd.dates import comparable_text, normalize_record_timestamp, parse_nvd_datetime

WORD = re.compile(r"[^\W_]+")


def _criteria(record: dict[str, Any]) -> Iterator[tuple[bool, CriteriaRange]]:
    for configuration in record.get("configurations", []):
        for node in configuration.get("nodes", []):
            for match in node.get("cpeMatch", []):
                yield bool(match.get("vulnerable", True)), CriteriaRange.from_json(match)


def _vectors(record: dict[str, Any], version: str) -> Iterator[set[str]]:
    keys = {
        "V2": ["cvssMetricV2"],
        "V3": ["cvssMetricV31", "cvssMetricV30"],
        "V4": ["cvssMetricV40"],
    }[version]
    for key in keys:
        for entry in record.get("metrics", {}).get(key, []):
            vector = entry["cvssData"]["vectorString"]
            yield {p.upper() for p in vector.split("/") if not p.upper().startswith("CVSS:")}


def _severities(record: dict[str, Any], version: str) -> set[str]:
    keys = {
        "V2": ["cvssMetricV2"],
        "V3": ["cvssMetricV31", "cvssMetricV30"],
        "V4": ["cvssMetricV40"],
    }[version]
    found = set()
    for key in keys:
        for entry in record.get("metrics", {}).get(key, []):
            severity = entry["cvssData"].get("baseSeverity") or entry.get("baseSeverity")
            if severity:
                found.add(severity.upper())
    return found


def _sources(record: dict[str, Any]) -> set[str]:
    found = {record.get("sourceIdentifier")}
    found |= {t.get("sourceIdentifier") for t in record.get("cveTags", [])}
    found |= {w.get("source") for w in record.get("weaknesses", [])}
    found |= {r.get("source") for r in record.get("references", [])}
    for entries in record.get("metrics", {}).values():
        found |= {e.get("source") for e in entries}
    return {s for s in found if s}


def _words(record: dict[str, Any]) -> list[list[str]]:
    return [WORD.findall(d["value"].lower()) for d in record["descriptions"] if d["lang"] == "en"]


def _keyword(record: dict[str, Any], text: str, exact: bool) -> bool:
    texts = _words(record)
    if exact:
        phrase = WORD.findall(text.lower())
        return any(_has_run(words, phrase, prefix=False) for words in texts)
    for word in text.split():
        tokens = WORD.findall(word.lower())
        if not any(_has_run(words, tokens, prefix=True) for words in texts):
            return False
    return True


def _has_run(words: list[str], tokens: list[str], *, prefix: bool) -> bool:
    n = len(tokens)
    for i in range(len(words) - n + 1):
        window = words[i : i + n]
        if window[:-1] == tokens[:-1] and (
            window[-1].startswith(tokens[-1]) if prefix else window[-1] == tokens[-1]
        ):
            return True
    return False


def _within(value: str | None, start: str, end: str) -> bool:
    if value is None:
        return False
    low = comparable_text(parse_nvd_datetime(start), ceil=True)
    high = comparable_text(parse_nvd_datetime(end))
    return low <= value <= high


def matches(query: str, record: dict[str, Any]) -> bool:
    """Whether `record` belongs to the answer of the CVE query string `query`."""
    params = dict(parse_qsl(query, keep_blank_values=True))
    if "cweId" in params:
        cwes = {d["value"].upper() for w in record.get("weaknesses", []) for d in w["description"]}
        if params["cweId"].upper() not in cwes:
            return False
    for version in ("V2", "V3", "V4"):
        if f"cvss{version}Severity" in params and params[
            f"cvss{version}Severity"
        ].upper() not in _severities(record, version):
            return False
        if f"cvss{version}Metrics" in params:
            wanted = {
                p.upper()
                for p in params[f"cvss{version}Metrics"].split("/")
                if not p.upper().startswith("CVSS:")
            }
            if not any(wanted <= vector for vector in _vectors(record, version)):
                return False
    if "cveTag" in params:
        tags = {tag for t in record.get("cveTags", []) for tag in t["tags"]}
        if params["cveTag"] not in tags:
            return False
    urls = " ".join(r["url"].lower() for r in record.get("references", []))
    if "hasCertNotes" in params and "kb.cert.org/vuls" not in urls:
        return False
    if "hasOval" in params and "oval.mitre.org" not in urls and "oval.cisecurity.org" not in urls:
        return False
    if "hasCertAlerts" in params and not any(
        m in urls
        for m in (
            "us-cert.gov/ncas/alerts",
            "cisa.gov/news-events/alerts",
            "cisa.gov/uscert/ncas/alerts",
        )
    ):
        return False
    if "sourceIdentifier" in params and params["sourceIdentifier"] not in _sources(record):
        return False
    if "keywordSearch" in params and not _keyword(
        record, params["keywordSearch"], "keywordExactMatch" in params
    ):
        return False
    if "noRejected" in params and record["vulnStatus"] == "Rejected":
        return False
    for name, field in (("lastMod", "lastModified"), ("pub", "published")):
        if f"{name}StartDate" in params and not _within(
            normalize_record_timestamp(record[field]),
            params[f"{name}StartDate"],
            params[f"{name}EndDate"],
        ):
            return False
    if "cpeName" in params:
        name = parse_cpe(params["cpeName"], partial=True)
        vulnerable_only = "isVulnerable" in params
        if not any(
            name_matches(name, criteria)
            for vulnerable, criteria in _criteria(record)
            if vulnerable or not vulnerable_only
        ):
            return False
    elif "virtualMatchString" in params:
        match = parse_cpe(params["virtualMatchString"], partial=True)
        start = (
            (params["versionStart"], params["versionStartType"] == "including")
            if "versionStart" in params
            else None
        )
        end = (
            (params["versionEnd"], params["versionEndType"] == "including")
            if "versionEnd" in params
            else None
        )
        if not any(
            virtual_matches(match, criteria, start=start, end=end)
            for _, criteria in _criteria(record)
        ):
            return False
    return True


def running_on_only_name(records: list[dict[str, Any]]) -> str | None:
    """A concrete CPE name that appears only in `vulnerable: false` criteria."""
    vulnerable: set[str] = set()
    platform: set[str] = set()
    for record in records:
        for is_vulnerable, criteria in _criteria(record):
            text = criteria.criteria.formatted()
            if criteria.criteria.version == "*":
                continue
            (vulnerable if is_vulnerable else platform).add(text)
    candidates = sorted(platform - vulnerable)
    for text in candidates:
        name = parse_cpe(text, partial=False)
        if not any(
            name_matches(name, criteria)
            for record in records
            for is_vulnerable, criteria in _criteria(record)
            if is_vulnerable
        ):
            return text
    return None
