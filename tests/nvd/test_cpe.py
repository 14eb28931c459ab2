"""CPE 2.3 parsing and the matching rules behind cpeName, virtualMatchString,
cpeMatchString and matchStringSearch (spec §6.1-§6.3, §4.1, §5.1).

Real names and criteria come from the records in tests/assets/nvd (see SOURCES.md).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InputError
from assay.nvd.cpe import (
    COMPONENT_NAMES,
    Cpe,
    CriteriaRange,
    InvalidCpe,
    criteria_expands_to,
    matches_match_string,
    name_matches,
    parse_cpe,
    virtual_matches,
)

ASSETS = Path(__file__).parent.parent / "assets" / "nvd"


def load(name: str) -> Any:
    path = ASSETS / name
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def cpe_matches(name: str) -> Iterator[dict[str, Any]]:
    """Every cpeMatch item of every CVE in an asset (a response or a single item)."""
    document = load(name)
    items = document.get("vulnerabilities", [document])
    for item in items:
        for configuration in item["cve"].get("configurations", []):
            for node in configuration["nodes"]:
                yield from node["cpeMatch"]


def criteria(name: str, index: int = 0) -> CriteriaRange:
    return CriteriaRange.from_json(list(cpe_matches(name))[index])


def cpe(text: str) -> Cpe:
    return parse_cpe(text, partial=True)


def hits(name: str, asset: str) -> bool:
    """Whether a cpeName hits any criteria of an asset (what the CVE API filter does)."""
    parsed = cpe(name)
    return any(name_matches(parsed, CriteriaRange.from_json(m)) for m in cpe_matches(asset))


# --- parsing ------------------------------------------------------------------------

LARAVEL = "cves/CVE-2022-40482.json"


def test_parse_components() -> None:
    parsed = parse_cpe("cpe:2.3:a:laravel:framework:8.83.27:*:*:*:*:*:*:*", partial=False)
    assert parsed.part == "a"
    assert parsed.vendor == "laravel"
    assert parsed.product == "framework"
    assert parsed.version == "8.83.27"
    assert parsed.components == (("a", "laravel", "framework", "8.83.27") + ("*",) * 7)
    assert parsed.formatted() == "cpe:2.3:a:laravel:framework:8.83.27:*:*:*:*:*:*:*"
    assert Cpe._fields == COMPONENT_NAMES


def test_partial_names_are_padded() -> None:
    # DOGESEC: these three cpeMatchString values return the same 32 products
    padded = parse_cpe("cpe:2.3:a:microsoft:access:*:*:*:*:*:*:*:*", partial=False)
    assert cpe("cpe:2.3:a:microsoft:access") == padded
    assert cpe("cpe:2.3:a:microsoft:access:::") == padded
    assert cpe("cpe:2.3:*:Microsoft") == cpe("cpe:2.3:*:microsoft:*:*:*:*:*:*:*:*:*")
    assert cpe("cpe:2.3:o:microsoft:windows_10:1607").version == "1607"


def test_case_is_normalized() -> None:
    assert cpe("CPE:2.3:A:Microsoft:ACCESS:-") == cpe("cpe:2.3:a:microsoft:access:-")
    assert cpe("cpe:2.3:*:Microsoft").vendor == "microsoft"


def test_escapes() -> None:
    # escaped colons never split
    parsed = cpe(r"cpe:2.3:a:vendor:prod\:uct:1\:2")
    assert parsed.product == r"prod\:uct"
    assert parsed.version == r"1\:2"
    assert parsed.update == "*"
    # real escaped names (CVE-2022-24916, CVE-1999-0161, cpes-2023 xerces-c++)
    l2geth = next(cpe_matches("nvdlib-search_full_page-item-CVE-2022-24916.json"))
    assert cpe(l2geth["criteria"]).product == r"eth-optimism\/l2geth"
    ios = next(cpe_matches("nvdgo-cves-1999-item-CVE-1999-0161.json"))
    assert cpe(ios["criteria"]).version == r"10.3\(3.4\)"
    # escapes are canonical: what needs no escape loses it, what needs one gains it
    assert cpe(r"cpe:2.3:a:apache:xerces-c\+\+") == cpe("cpe:2.3:a:apache:xerces-c++")
    assert cpe("cpe:2.3:a:apache:xerces-c++").product == r"xerces-c\+\+"
    assert cpe(r"cpe:2.3:a:a:node\.js") == cpe("cpe:2.3:a:a:node.js")
    assert cpe(r"cpe:2.3:a:a:B\x").product == "bx"
    # an escaped backslash before a separator still separates
    assert cpe(r"cpe:2.3:a:a:b\\:c").product == "b\\\\"
    assert cpe(r"cpe:2.3:a:a:b\\:c").version == "c"
    # escaped ANY/NA are literals
    assert cpe(r"cpe:2.3:a:a:b:\-").version == r"\-"
    assert cpe(r"cpe:2.3:a:a:b:\*").version == r"\*"
    assert cpe("cpe:2.3:a:a:b:-").version == "-"


@pytest.mark.parametrize(
    ("text", "partial", "reason"),
    [
        ("INVALID:2.3:*:Microsoft", True, "must start with 'cpe:2.3:'"),
        ("cpe:2.2:a:microsoft:access", True, "must start with 'cpe:2.3:'"),
        ("cpe:/a:microsoft:access", True, "must start with 'cpe:2.3:'"),
        ("cpe:2.3", True, "must start with 'cpe:2.3:'"),
        ("", True, "must start with 'cpe:2.3:'"),
        (
            "cpe:2.3:a:b:c:d:e:f:g:h:i:j:k:l",
            True,
            "at most 11 components after 'cpe:2.3:', found 12",
        ),
        ("cpe:2.3:a:b:c:d:e:f:g:h:i:j:k:l", False, "found 12"),
        ("cpe:2.3:a:b:c:d:e:f:g:h:i:j:k:", False, "found 12"),
        ("cpe:2.3:a:microsoft:access", False, "needs all 11 components after 'cpe:2.3:', found 3"),
        ("cpe:2.3:x:microsoft:access", True, "part component must be a, o, h or *, found 'x'"),
        ("cpe:2.3:-:microsoft:access", True, "part component must be a, o, h or *"),
        ("cpe:2.3:a:microsoft:access\\", True, "lone backslash"),
    ],
)
def test_invalid(text: str, partial: bool, reason: str) -> None:
    with pytest.raises(InvalidCpe) as caught:
        parse_cpe(text, partial=partial)
    assert reason in caught.value.reason
    assert isinstance(caught.value, InputError)
    assert caught.value.reason.isascii()


def test_fourteen_fields_rejected() -> None:
    # matchStringSearch with 14 colon-separated fields (MCP-D4) ⇒ 404
    with pytest.raises(InvalidCpe, match="found 12"):
        parse_cpe("cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*:*", partial=False)
    parse_cpe("cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*", partial=False)


def test_reason_is_header_safe() -> None:
    with pytest.raises(InvalidCpe) as caught:
        cpe("ĉpe:2.3:\r\n" + "x" * 200)
    assert caught.value.reason.isascii()
    assert "\n" not in caught.value.reason
    assert len(caught.value.reason) < 120


def test_all_real_names_parse_and_round_trip() -> None:
    names = [m["criteria"] for m in cpe_matches("osv-CVE-2022-0090.json")]
    for document in load("nvdgo-cpematch-CVE-2022-32223.json.gz")["matchStrings"]:
        record = document["matchString"]
        names.append(record["criteria"])
        names.extend(match["cpeName"] for match in record.get("matches", []))
    assert len(names) > 20
    for name in names:
        parsed = parse_cpe(name, partial=False)
        assert parsed.formatted() == name  # NVD's own names are already canonical


# Components for generated names: ANY, NA, plain values, escaped punctuation, case.
_plain = st.from_regex(r"[A-Za-z0-9._\-]{1,8}", fullmatch=True)
_escaped = st.sampled_from(list(r"!\"#$%&'()*+,/:;<=>?@[\]^`{|}~ ")).map(lambda c: "\\" + c)
_component = st.one_of(
    st.just("*"),
    st.just("-"),
    st.just(""),
    _plain,
    st.lists(st.one_of(_plain, _escaped, st.sampled_from(["+", "é", "!"])), min_size=1).map(
        "".join
    ),
)
_part = st.sampled_from(["a", "o", "h", "*", "A", "O", "H"])
generated = st.builds(
    lambda part, rest: "cpe:2.3:" + ":".join([part, *rest]),
    _part,
    st.lists(_component, max_size=10),
)


@given(generated)
def test_round_trip(text: str) -> None:
    parsed = parse_cpe(text, partial=True)
    assert parse_cpe(parsed.formatted(), partial=False) == parsed
    assert parse_cpe(parsed.formatted().upper(), partial=False) == parsed
    assert len(parsed.formatted().split(":")) >= 13


@given(generated, st.integers(min_value=0, max_value=10))
def test_padding_is_equivalent(text: str, extra: int) -> None:
    parsed = parse_cpe(text, partial=True)
    padded = parse_cpe(parsed.formatted() if extra else text, partial=True)
    assert padded == parsed
    if "\\" not in text:  # no escape can hide a colon: components are colons + 1
        present = text.count(":") - 1
        assert parse_cpe(text + ":*" * min(extra, 11 - present), partial=True) == parsed
        assert parse_cpe(text + ":" * min(extra, 11 - present), partial=True) == parsed


@given(generated)
def test_a_name_matches_itself(text: str) -> None:
    name = parse_cpe(text, partial=True)
    assert name_matches(name, CriteriaRange(name))
    assert criteria_expands_to(CriteriaRange(name), name)
    assert matches_match_string(name, name)
    assert virtual_matches(name, CriteriaRange(name), start=None, end=None)


_versions = st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,3}(-rc[0-9])?", fullmatch=True)


@given(
    _versions,
    st.one_of(st.none(), st.tuples(_versions, st.booleans())),
    st.one_of(st.none(), st.tuples(_versions, st.booleans())),
)
def test_expansion_implies_a_cpe_name_hit(
    version: str, low: tuple[str, bool] | None, high: tuple[str, bool] | None
) -> None:
    item = CriteriaRange(
        cpe("cpe:2.3:a:laravel:framework:*"),
        version_start_including=low[0] if low and low[1] else None,
        version_start_excluding=low[0] if low and not low[1] else None,
        version_end_including=high[0] if high and high[1] else None,
        version_end_excluding=high[0] if high and not high[1] else None,
    )
    name = cpe(f"cpe:2.3:a:laravel:framework:{version}")
    hit = name_matches(name, item)
    assert criteria_expands_to(item, name) == hit
    assert item.contains_version(version) == hit
    # a concrete version hits exactly when the point range [v, v] overlaps the criteria
    assert (
        virtual_matches(cpe("cpe:2.3:a:laravel"), item, start=(version, True), end=(version, True))
        == hit
    )


# --- cpeName against criteria (§6.2) ------------------------------------------------


def test_laravel_range() -> None:
    # REAL-2024A: 8.83.27 ∈ [8.0.0, 9.32.0) hits, v8.83.27 misses
    assert hits("cpe:2.3:a:laravel:framework:8.83.27:*:*:*:*:*:*:*", LARAVEL)
    assert not hits("cpe:2.3:a:laravel:framework:v8.83.27:*:*:*:*:*:*:*", LARAVEL)
    assert hits("cpe:2.3:a:laravel:framework:8.0.0", LARAVEL)  # including start
    assert not hits("cpe:2.3:a:laravel:framework:9.32.0", LARAVEL)  # excluding end
    assert hits("cpe:2.3:a:laravel:framework:9.31.99", LARAVEL)
    assert not hits("cpe:2.3:a:laravel:framework:7.30.6", LARAVEL)
    assert not hits("cpe:2.3:a:laravel:lumen:8.83.27", LARAVEL)
    assert hits("CPE:2.3:A:Laravel:Framework:8.83.27", LARAVEL)  # mixed case


def test_including_end_boundary() -> None:
    # CVE-2020-13595: esp-idf [4.0.0, 4.2]
    asset = "osv-CVE-2020-13595.json"
    assert hits("cpe:2.3:a:espressif:esp-idf:4.2", asset)
    assert hits("cpe:2.3:a:espressif:esp-idf:4.0.0", asset)
    assert not hits("cpe:2.3:a:espressif:esp-idf:4.2.1", asset)
    assert not hits("cpe:2.3:a:espressif:esp-idf:3.3.4", asset)
    # the running-on platform entry (vulnerable: false) is a literal `-` version
    assert hits("cpe:2.3:h:espressif:esp32:-", asset)
    assert not hits("cpe:2.3:h:espressif:esp32:1.0", asset)


def test_end_only_ranges() -> None:
    # CVE-2017-7542: linux_kernel, versionEndIncluding 4.12.3
    asset = "nvdlib-CVE-2017-7542.json"
    assert hits("cpe:2.3:o:linux:linux_kernel:4.12.3", asset)
    assert hits("cpe:2.3:o:linux:linux_kernel:2.6.32-rc1", asset)
    assert not hits("cpe:2.3:o:linux:linux_kernel:4.12.4", asset)
    # CVE-2022-32746: samba, three disjoint ranges with excluding ends
    samba = "osv-CVE-2022-32746.json"
    assert hits("cpe:2.3:a:samba:samba:4.14.13", samba)
    assert not hits("cpe:2.3:a:samba:samba:4.14.14", samba)
    assert hits("cpe:2.3:a:samba:samba:4.15.0", samba)
    assert not hits("cpe:2.3:a:samba:samba:4.16.4", samba)
    assert not hits("cpe:2.3:a:samba:samba:4.2.0", samba)


def test_other_components() -> None:
    # CVE-2022-0090: gitlab community/enterprise in sw_edition
    asset = "osv-CVE-2022-0090.json"
    assert hits("cpe:2.3:a:gitlab:gitlab:14.5.2:*:*:*:community:*:*:*", asset)
    assert hits("cpe:2.3:a:gitlab:gitlab:14.5.2:*:*:*:enterprise:*:*:*", asset)
    assert not hits("cpe:2.3:a:gitlab:gitlab:14.5.2:*:*:*:premium:*:*:*", asset)
    assert hits("cpe:2.3:a:gitlab:gitlab:14.5.2", asset)  # a name `*` matches anything
    assert not hits("cpe:2.3:a:gitlab:gitlab:14.5.3:*:*:*:community", asset)
    # criteria `*` matches any name value
    assert hits("cpe:2.3:a:laravel:framework:8.83.27:*:*:*:*:php:x64:*", LARAVEL)


def test_escaped_names_match() -> None:
    asset = "nvdlib-search_full_page-item-CVE-2022-24916.json"  # versionEndExcluding 0.5.11
    assert hits(r"cpe:2.3:a:optimism:eth-optimism\/l2geth:0.5.10", asset)
    assert hits("cpe:2.3:a:optimism:eth-optimism/l2geth:0.5.10", asset)  # unescaped input
    assert not hits(r"cpe:2.3:a:optimism:eth-optimism\/l2geth:0.5.11", asset)
    cisco = "nvdgo-cves-1999-item-CVE-1999-0161.json"
    assert hits(r"cpe:2.3:o:cisco:ios:10.3\(3.4\)", cisco)
    assert hits("cpe:2.3:o:cisco:ios:10.3(4.2)", cisco)
    assert not hits(r"cpe:2.3:o:cisco:ios:10.3\(3.5\)", cisco)


def test_literal_and_na_versions() -> None:
    literal = CriteriaRange(cpe("cpe:2.3:o:linux:linux_kernel:2.6.20.1"))
    assert name_matches(cpe("cpe:2.3:o:linux:linux_kernel:2.6.20.1"), literal)
    assert name_matches(cpe("cpe:2.3:o:linux:linux_kernel:*"), literal)
    assert not name_matches(cpe("cpe:2.3:o:linux:linux_kernel:2.6.20.01"), literal)
    assert not name_matches(cpe("cpe:2.3:o:linux:linux_kernel:-"), literal)
    na = CriteriaRange(cpe("cpe:2.3:o:microsoft:windows:-"))
    assert name_matches(cpe("cpe:2.3:o:microsoft:windows:-"), na)
    assert name_matches(cpe("cpe:2.3:o:microsoft:windows:*"), na)
    assert not name_matches(cpe("cpe:2.3:o:microsoft:windows:10"), na)
    na_update = CriteriaRange(cpe("cpe:2.3:a:cisco:prime_service_catalog:12.1:-"))
    assert not name_matches(cpe("cpe:2.3:a:cisco:prime_service_catalog:12.1:patch10"), na_update)
    assert name_matches(cpe("cpe:2.3:a:cisco:prime_service_catalog:12.1:-"), na_update)


def test_unversioned_names_against_a_range() -> None:
    laravel = criteria(LARAVEL)
    assert name_matches(cpe("cpe:2.3:a:laravel:framework:*"), laravel)
    assert name_matches(cpe("cpe:2.3:a:laravel:framework:-"), laravel)
    unbounded = CriteriaRange(cpe("cpe:2.3:o:slackware:slackware_linux:*"))  # CVE-1999-0242
    assert name_matches(cpe("cpe:2.3:o:slackware:slackware_linux:3.0"), unbounded)
    assert name_matches(cpe("cpe:2.3:o:slackware:slackware_linux:-"), unbounded)


def test_criteria_from_json() -> None:
    laravel = criteria(LARAVEL)
    assert laravel.criteria == cpe("cpe:2.3:a:laravel:framework")
    assert laravel.start == ("8.0.0", True)
    assert laravel.end == ("9.32.0", False)
    assert laravel.has_bounds
    assert laravel.contains_version("8.83.27")
    assert not laravel.contains_version("v8.83.27")
    esp = criteria("osv-CVE-2020-13595.json")
    assert esp.end == ("4.2", True)
    platform = criteria("osv-CVE-2020-13595.json", 1)
    assert platform.start is None
    assert platform.end is None
    assert not platform.has_bounds
    assert criteria("nvdlib-CVE-2017-7542.json").start is None


@pytest.mark.parametrize(
    ("obj", "where"),
    [
        ({}, "criteria"),
        ({"criteria": 3}, "criteria"),
        ({"criteria": "cpe:2.3:a:laravel:framework"}, "criteria"),  # records are complete
        ({"criteria": "nope"}, "criteria"),
        ({"criteria": "cpe:2.3:a:b:c:*:*:*:*:*:*:*:*", "versionEndExcluding": ""}, "versionEnd"),
        ({"criteria": "cpe:2.3:a:b:c:*:*:*:*:*:*:*:*", "versionStartIncluding": 1}, "version"),
        (
            {
                "criteria": "cpe:2.3:a:b:c:*:*:*:*:*:*:*:*",
                "versionEndIncluding": "1",
                "versionEndExcluding": "2",
            },
            "versionEnd",
        ),
    ],
)
def test_criteria_from_json_rejects(obj: dict[str, object], where: str) -> None:
    with pytest.raises(InvalidCpe) as caught:
        CriteriaRange.from_json(obj)
    assert caught.value.where.startswith(where)


# --- virtualMatchString (§6.3) ------------------------------------------------------

KERNEL = "cpe:2.3:o:linux:linux_kernel"


def virtual(match: str, item: CriteriaRange, start: str | None = None, end: str | None = None,
            *, start_inclusive: bool = True, end_inclusive: bool = True) -> bool:  # fmt: skip
    return virtual_matches(
        cpe(match),
        item,
        start=None if start is None else (start, start_inclusive),
        end=None if end is None else (end, end_inclusive),
    )


def test_virtual_linux_kernel_2_6() -> None:
    # DOC-VULN: virtualMatchString=cpe:2.3:o:linux:linux_kernel, versionStart=2.6 including,
    # versionEnd=2.6 including ⇒ "CVE affiliated with version 2.6"
    up_to_4_12_3 = criteria("nvdlib-CVE-2017-7542.json")
    assert virtual(KERNEL, up_to_4_12_3, "2.6", "2.6")
    assert not virtual(KERNEL, up_to_4_12_3, "4.12.4", "5.0")
    assert virtual(KERNEL, up_to_4_12_3, "4.12.3", "5.0")
    assert not virtual(KERNEL, up_to_4_12_3, "4.12.3", "5.0", start_inclusive=False)
    literal_2_6_20_1 = criteria("nvdgo-cves-1999-item-CVE-1999-0245.json")
    assert not virtual(KERNEL, literal_2_6_20_1, "2.6", "2.6")  # 2.6 < 2.6.20.1
    assert virtual(KERNEL, literal_2_6_20_1, "2.6", "2.7")
    assert virtual(KERNEL, literal_2_6_20_1, "2.6.20.1", "2.6.20.1")
    assert not virtual(KERNEL, literal_2_6_20_1, "2.6.20.1", "2.7", start_inclusive=False)
    assert virtual(KERNEL, literal_2_6_20_1)  # no range: every version


def test_virtual_literal_version_is_a_point_range() -> None:
    laravel = criteria(LARAVEL)
    assert virtual("cpe:2.3:a:laravel:framework:8.83.27", laravel)
    assert not virtual("cpe:2.3:a:laravel:framework:9.32.0", laravel)
    assert virtual("cpe:2.3:a:laravel:framework", laravel, "9.0", "10.0")
    assert not virtual("cpe:2.3:a:laravel:framework", laravel, "9.32.0", "10.0")
    assert not virtual("cpe:2.3:a:laravel:framework", laravel, "1.0", "8.0.0", end_inclusive=False)
    assert virtual("cpe:2.3:a:laravel:framework", laravel, end="8.0.0")
    assert virtual("cpe:2.3:a:laravel:framework", laravel, start="1.0")
    # requested range empty in itself
    assert not virtual("cpe:2.3:a:laravel:framework", laravel, "9.0", "8.5")
    # literal plus a range that excludes it
    assert not virtual("cpe:2.3:a:laravel:framework:8.83.27", laravel, "9.0", "9.1")
    everything = CriteriaRange(cpe("cpe:2.3:a:laravel:framework:*"))
    assert virtual("cpe:2.3:a:laravel:framework:1.0", everything)
    assert virtual("cpe:2.3:a:laravel:framework", everything, "1", "1")


def test_virtual_components() -> None:
    gitlab = criteria("osv-CVE-2022-0090.json")  # sw_edition community
    assert virtual("cpe:2.3:a:gitlab", gitlab)
    assert virtual("cpe:2.3:*:gitlab", gitlab)
    assert virtual("cpe:2.3:a:gitlab:gitlab:*:*:*:*:community", gitlab)
    assert not virtual("cpe:2.3:a:gitlab:gitlab:*:*:*:*:enterprise", gitlab)
    assert not virtual("cpe:2.3:o:gitlab", gitlab)
    # DOC-VULN language example: a criteria `*` does not satisfy a requested `de`
    assert not virtual("cpe:2.3:*:*:*:*:*:*:de", gitlab)
    german = CriteriaRange(cpe("cpe:2.3:a:vendor:product:1.0:*:*:DE"))
    assert virtual("cpe:2.3:*:*:*:*:*:*:de", german)
    na = criteria("osv-CVE-2020-13595.json", 1)  # esp32 version `-`
    assert virtual("cpe:2.3:h:espressif:esp32:-", na)
    assert virtual("cpe:2.3:h:espressif:esp32", na)
    assert not virtual("cpe:2.3:h:espressif:esp32", na, "1.0", "2.0")
    assert not virtual("cpe:2.3:h:espressif:esp32:1.0", na)
    assert not virtual("cpe:2.3:a:laravel:framework:-", criteria(LARAVEL))


# --- dictionary matching (§4.1, §5.1) -----------------------------------------------


def test_match_string_against_dictionary_names() -> None:
    access = cpe("cpe:2.3:a:microsoft:access:-:*:*:*:*:*:*:*")
    for pattern in (
        "cpe:2.3:a:microsoft:access",
        "cpe:2.3:a:microsoft:access:::",
        "cpe:2.3:*:Microsoft",
        "cpe:2.3:a:microsoft:access:-:*:*:*:*:*:*:*",
    ):
        assert matches_match_string(cpe(pattern), access), pattern
    assert not matches_match_string(cpe("cpe:2.3:a:microsoft:excel"), access)
    assert not matches_match_string(cpe("cpe:2.3:a:microsoft:access:2016"), access)
    assert not matches_match_string(cpe("cpe:2.3:o:microsoft"), access)
    # matchStringSearch against criteria strings: a criteria `*` is not a specific value
    log4j = cpe("cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*")
    assert matches_match_string(log4j, cpe("cpe:2.3:a:apache:log4j:2.0:beta9:*:*:*:*:*:*"))
    assert not matches_match_string(cpe("cpe:2.3:a:apache:log4j:2.0"), log4j)


def test_stored_matches_expand_from_their_criteria() -> None:
    # cpematch for CVE-2022-32223: every listed match falls under its criteria
    records = [
        m["matchString"] for m in load("nvdgo-cpematch-CVE-2022-32223.json.gz")["matchStrings"]
    ]
    checked = 0
    for record in records:
        item = CriteriaRange.from_json(record)
        for match in record.get("matches", []):
            assert criteria_expands_to(item, parse_cpe(match["cpeName"], partial=False))
            checked += 1
    assert checked > 10
    node = next(CriteriaRange.from_json(r) for r in records if "lts" in r["criteria"])
    assert node.start == ("16.13.0", True)
    assert node.end == ("16.16.0", False)
    assert criteria_expands_to(node, cpe("cpe:2.3:a:nodejs:node.js:16.15.1:*:*:*:lts:*:*:*"))
    assert not criteria_expands_to(node, cpe("cpe:2.3:a:nodejs:node.js:16.16.0:*:*:*:lts"))
    assert not criteria_expands_to(node, cpe("cpe:2.3:a:nodejs:node.js:16.15.1"))  # update `*`
    assert not criteria_expands_to(node, cpe("cpe:2.3:a:nodejs:node.js:-:*:*:*:lts"))
    windows = next(CriteriaRange.from_json(r) for r in records if ":windows:" in r["criteria"])
    assert criteria_expands_to(windows, cpe("cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:arm64:*"))
    assert not criteria_expands_to(windows, cpe("cpe:2.3:o:microsoft:windows:10"))


def test_cherokee_example() -> None:
    # spec §5.2 (DOGESEC): versionEndIncluding 1.2.103 lists 1.0.12 and 1.2.103
    item = CriteriaRange.from_json(
        {
            "criteria": "cpe:2.3:a:cherokee-project:cherokee_web_server:*:*:*:*:*:*:*:*",
            "versionEndIncluding": "1.2.103",
        }
    )
    for version, expected in (("1.0.12", True), ("1.2.103", True), ("1.2.104", False)):
        name = cpe(f"cpe:2.3:a:cherokee-project:cherokee_web_server:{version}:*:*:*:*:*:*:*")
        assert criteria_expands_to(item, name) is expected
