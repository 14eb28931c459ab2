"""The search form, translated into the CVE API's own query: `search_pairs(form) -> SearchPlan`.

Pure. The page asks the store exactly what `GET /rest/json/cves/2.0?<pairs>` asks, so
the page's JSON twin is that URL and the API's rules (and its error messages) apply
unchanged. The one box takes a keyword, a CVE id, a CPE name or match string, or a purl.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from assay.errors import InputError, QueryError
from assay.nvd.cpe import parse_cpe
from assay.nvd.cve_query import MAX_RESULTS_PER_PAGE

CVE_ID = re.compile(r"\s*(CVE-\d{4}-\d{4,19})\s*", re.IGNORECASE)
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
CVSS_VERSIONS = ("V4", "V3", "V2")
SEVERITIES = ("CRITICAL", "HIGH", "MEDIUM", "LOW")
PAGE_SIZES = (20, 50, 100, 500, MAX_RESULTS_PER_PAGE)
DEFAULT_PAGE_SIZE = 20
MAX_BOX = 1000  # characters in the search box


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """What the page asks the API, and how the box was read."""

    pairs: tuple[tuple[str, str], ...]  # the API filter, without paging
    page_size: int
    start_index: int
    newest_first: bool
    reading: str  # "keyword", "CPE name", "CPE match string", "purl", or ""
    redirect_cve: str | None = None  # the box held one CVE id: open its page

    @property
    def empty(self) -> bool:
        return not self.pairs

    def api_query(self, start_index: int) -> str:
        """The API query string of one page."""
        return urlencode(
            [*self.pairs, ("resultsPerPage", str(self.page_size)), ("startIndex", str(start_index))]
        )


def _one(form: Mapping[str, str], name: str) -> str:
    return (form.get(name) or "").strip()


def _integer(form: Mapping[str, str], name: str, default: int) -> int:
    text = _one(form, name)
    if not text:
        return default
    if not text.isdigit() or len(text) > 9:
        raise QueryError(name, f"{name}: expected a whole number, found {text[:40]!r}")
    return int(text)


def _window(form: Mapping[str, str], prefix: str, api_prefix: str) -> list[tuple[str, str]]:
    start, end = _one(form, f"{prefix}From"), _one(form, f"{prefix}To")
    days = {f"{prefix}From": start, f"{prefix}To": end}
    if not any(days.values()):
        return []
    for name, value in days.items():  # a malformed day is said first, then a missing one
        if value and not DATE.fullmatch(value):
            raise QueryError(name, f"{name}: expected a date YYYY-MM-DD, found {value[:40]!r}")
    for name, value in days.items():
        if not value:
            raise QueryError(name, f"{name}: a date window needs both its first and last day")
    return [
        (f"{api_prefix}StartDate", f"{start}T00:00:00.000"),
        (f"{api_prefix}EndDate", f"{end}T23:59:59.999"),
    ]


def _purl_as_cpe(text: str) -> str:
    from packageurl import PackageURL

    try:
        purl = PackageURL.from_string(text)
    except ValueError as error:
        raise QueryError("q", f"q: not a valid purl ({error})") from None
    name = re.sub(r"[^A-Za-z0-9._-]", "_", purl.name.lower())
    version = re.sub(r"[^A-Za-z0-9._-]", "_", purl.version) if purl.version else "*"
    return f"cpe:2.3:a:*:{name}:{version}"


def read_box(text: str) -> tuple[str, list[tuple[str, str]], str | None]:
    """How the search box is read: (reading, API pairs, CVE id to open)."""
    if not text:
        return "", [], None
    if len(text) > MAX_BOX:
        raise QueryError("q", f"q: at most {MAX_BOX} characters, found {len(text)}")
    cve = CVE_ID.fullmatch(text)
    if cve:
        return "CVE id", [], cve.group(1).upper()
    lowered = text.lower()
    if lowered.startswith("pkg:"):
        return "purl", [("virtualMatchString", _purl_as_cpe(text))], None
    if lowered.startswith("cpe:"):
        return _cpe_box(text)
    return "keyword", [("keywordSearch", text)], None


def _cpe_box(text: str) -> tuple[str, list[tuple[str, str]], None]:
    """A CPE in the search box: a name (part, vendor, product and version given) is
    looked up as `cpeName`, else as a match string."""
    try:
        cpe = parse_cpe(text, partial=True)
    except InputError as error:
        raise QueryError("q", f"q: not a CPE 2.3 name or match string ({error.reason})") from None
    if "*" not in (cpe.part, cpe.vendor, cpe.product, cpe.version):
        return "CPE name", [("cpeName", text)], None
    return "CPE match string", [("virtualMatchString", text)], None


def _severity_pairs(form: Mapping[str, str]) -> list[tuple[str, str]]:
    """`cvss{V}Severity` from the form's severity and CVSS version (V3 by default)."""
    severity = _one(form, "severity").upper()
    version = _one(form, "cvssVersion").upper() or "V3"
    if version not in CVSS_VERSIONS:
        raise QueryError(
            "cvssVersion", f"cvssVersion: expected one of V4, V3, V2, found {version[:10]!r}"
        )
    if not severity:
        return []
    if severity not in SEVERITIES or (version == "V2" and severity == "CRITICAL"):
        raise QueryError(
            "severity", f"severity: not a CVSS {version[1]} severity: {severity[:20]!r}"
        )
    return [(f"cvss{version}Severity", severity)]


def _cwe_pairs(form: Mapping[str, str]) -> list[tuple[str, str]]:
    cwe = _one(form, "cwe")
    if not cwe:
        return []
    return [("cweId", cwe if not cwe.isdigit() else f"CWE-{cwe}")]


def _flag(form: Mapping[str, str], field: str, parameter: str) -> list[tuple[str, str]]:
    """A checkbox: the API's valueless parameter when it is ticked."""
    return [(parameter, "")] if _one(form, field) else []


def _page_size(form: Mapping[str, str]) -> int:
    page_size = _integer(form, "resultsPerPage", DEFAULT_PAGE_SIZE)
    if not 1 <= page_size <= MAX_RESULTS_PER_PAGE:
        raise QueryError(
            "resultsPerPage",
            f"resultsPerPage: expected 1 to {MAX_RESULTS_PER_PAGE}, found {page_size}",
        )
    return page_size


def search_plan(form: Mapping[str, str]) -> SearchPlan:
    """Read the form; raise `QueryError` naming the field that is wrong."""
    reading, pairs, redirect = read_box(_one(form, "q"))
    pairs += _severity_pairs(form)
    pairs += _flag(form, "kev", "hasKev")
    pairs += _cwe_pairs(form)
    pairs += _window(form, "published", "pub")
    pairs += _window(form, "modified", "lastMod")
    pairs += _flag(form, "noRejected", "noRejected")
    if pairs and reading == "CPE name":
        pairs += _flag(form, "vulnerable", "isVulnerable")
    return SearchPlan(
        pairs=tuple(pairs),
        page_size=_page_size(form),
        start_index=_integer(form, "startIndex", 0),
        newest_first=_one(form, "order") != "oldest",
        reading=reading,
        redirect_cve=redirect,
    )


@dataclass(frozen=True, slots=True)
class Pager:
    """Where one page sits in a result set, in the API's own `startIndex` terms."""

    total: int
    start_index: int
    page_size: int

    @property
    def first_shown(self) -> int:
        return min(self.total, self.start_index + 1)

    @property
    def last_shown(self) -> int:
        return min(self.total, self.start_index + self.page_size)

    @property
    def previous(self) -> int | None:
        return max(0, self.start_index - self.page_size) if self.start_index > 0 else None

    @property
    def next(self) -> int | None:
        following = self.start_index + self.page_size
        return following if following < self.total else None

    @property
    def last(self) -> int | None:
        if self.total <= self.page_size:
            return None
        return ((self.total - 1) // self.page_size) * self.page_size
