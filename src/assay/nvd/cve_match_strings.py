"""`cpematch?cveId=` answered completely when the store holds the CVE but not every
match-criteria record its configurations name.

A CVE's configurations name each criteria with its `matchCriteriaId`, its CPE match
string and its version bounds: that is the match-criteria record's identity. What the
CVE does not carry is made up as follows (docs/nvd-compatibility.md lists what can still
differ from NVD):

* `matches`: the products of the product dictionary the store holds that the criteria
  covers (what `cpes?matchCriteriaId=` answers for it), in the dictionary's order;
* `created` and `lastModified`: the CVE's `published` and `lastModified`;
* `status`: `Active` (a criteria a current CVE configuration uses);
* no `cpeLastModified`.

A stored match-criteria record always wins over a made-up one. Only the plain
`cveId` query (with paging) is completed; combined with other filters, only stored
records are answered, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import orjson

from assay.nvd.cpe_query import MAX_RESULTS_PER_PAGE as MAX_PRODUCTS_PER_PAGE
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cpematch_query import MAX_RESULTS_PER_PAGE as MAX_MATCHES_PER_PAGE
from assay.nvd.cpematch_query import CpeMatchQuery
from assay.nvd.cve_query import CveQuery
from assay.nvd.jsonenc import encode
from assay.nvd.storage import Page, Store

BOUNDS = (
    "versionStartIncluding",
    "versionStartExcluding",
    "versionEndIncluding",
    "versionEndExcluding",
)


@dataclass(frozen=True, slots=True)
class NamedCriteria:
    """A criteria as a CVE configuration names it."""

    match_criteria_id: str  # upper-case
    criteria: str
    bounds: tuple[tuple[str, str], ...]  # (name, value) in NVD's key order


def criteria_of(cve: dict[str, Any]) -> list[NamedCriteria]:
    """Every criteria the CVE's configurations name, once per id, first use first. Pure."""
    found: dict[str, NamedCriteria] = {}
    for configuration in _objects(cve, "configurations"):
        for node in _objects(configuration, "nodes"):
            for match in _objects(node, "cpeMatch"):
                named = _named(match)
                if named is not None:
                    found.setdefault(named.match_criteria_id, named)
    return list(found.values())


def _objects(parent: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The JSON objects listed under `key` (none when that is no list)."""
    items = parent.get(key)
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _named(match: dict[str, Any]) -> NamedCriteria | None:
    """The criteria of one `cpeMatch` entry; None without an id and a criteria."""
    criteria_id, criteria = match.get("matchCriteriaId"), match.get("criteria")
    if not isinstance(criteria_id, str) or not isinstance(criteria, str):
        return None
    bounds = tuple((name, match[name]) for name in BOUNDS if isinstance(match.get(name), str))
    return NamedCriteria(criteria_id.upper(), criteria, bounds)


def made_up_record(
    named: NamedCriteria, *, created: str, last_modified: str, matches: list[dict[str, str]]
) -> bytes:
    """The match-criteria record of `named`, in NVD's key order and encoding. Pure."""
    record: dict[str, Any] = {"matchCriteriaId": named.match_criteria_id}
    record["criteria"] = named.criteria
    record.update(named.bounds)
    record["lastModified"] = last_modified
    record["created"] = created
    record["status"] = "Active"
    if matches:
        record["matches"] = matches
    return encode(record)


def search_match_strings(store: Store, query: CpeMatchQuery) -> Page:
    """`store.search_match_strings`, completed from the CVE for a plain `cveId` query."""
    plain = replace(query, start_index=0, results_per_page=MAX_MATCHES_PER_PAGE)
    if query.cve_id is None or plain != CpeMatchQuery(cve_id=query.cve_id):
        return store.search_match_strings(query)
    found = store.search_cves(CveQuery(cve_id=query.cve_id))
    if not found.records:
        return store.search_match_strings(query)
    records = _stored_and_made_up(store, plain, orjson.loads(found.records[0]))
    page = records[query.start_index : query.start_index + query.results_per_page]
    return Page(len(records), [record for _, record in page])


def _stored_and_made_up(
    store: Store, plain: CpeMatchQuery, cve: dict[str, Any]
) -> list[tuple[dict[str, Any], bytes]]:
    """The stored criteria of the CVE plus those made up for the ones the store lacks,
    decoded and encoded, in the API's order (created, then id)."""
    stored = list(_all(lambda start: store.search_match_strings(replace(plain, start_index=start))))
    known = {str(orjson.loads(record)["matchCriteriaId"]).upper() for record in stored}
    records = [(orjson.loads(record), record) for record in stored]
    for named in criteria_of(cve):
        if named.match_criteria_id not in known:
            record = _made_up_from(store, cve, named)
            records.append((orjson.loads(record), record))
    records.sort(key=lambda pair: (str(pair[0].get("created")), str(pair[0]["matchCriteriaId"])))
    return records


def derived_record(store: Store, criteria_id: str) -> tuple[bytes, str] | None:
    """The match-criteria record of `criteria_id` made up from a CVE that names it (as
    `cpematch?cveId=` completes it), with that CVE's id; None when no CVE names it."""
    cve_id = store.cve_naming_criteria(criteria_id)
    if cve_id is None:
        return None
    found = store.search_cves(CveQuery(cve_id=cve_id))
    if not found.records:
        return None
    cve = orjson.loads(found.records[0])
    wanted = criteria_id.upper()
    named = next((c for c in criteria_of(cve) if c.match_criteria_id == wanted), None)
    if named is None:
        return None
    return _made_up_from(store, cve, named), cve_id


def _made_up_from(store: Store, cve: dict[str, Any], named: NamedCriteria) -> bytes:
    """The record of `named`, dated as the CVE naming it, with the stored expansion."""
    return made_up_record(
        named,
        created=str(cve.get("published", "")),
        last_modified=str(cve.get("lastModified", "")),
        matches=_matches(store, named.match_criteria_id),
    )


def _matches(store: Store, criteria_id: str) -> list[dict[str, str]]:
    products = _all(
        lambda start: store.search_cpes(
            CpeQuery(
                match_criteria_id=criteria_id,
                start_index=start,
                results_per_page=MAX_PRODUCTS_PER_PAGE,
            )
        )
    )
    names = []
    for record in products:
        product = orjson.loads(record)
        names.append({"cpeName": product["cpeName"], "cpeNameId": product["cpeNameId"]})
    return names


def _all(page_at: Callable[[int], Page]) -> Iterator[bytes]:
    """Every record of a paged search, `page_at(start_index)` giving each page."""
    start = 0
    while True:
        page = page_at(start)
        yield from page.records
        start += len(page.records)
        if not page.records or start >= page.total:
            return
