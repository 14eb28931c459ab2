"""Argument validation and wire translation (`assay.nvd.client._params`), table-driven."""

from __future__ import annotations

import enum
import itertools
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest

from assay.errors import QueryError
from assay.nvd.client import (
    InvalidQuery,
    build_query,
    encode_query,
    format_datetime,
    split_window,
)
from assay.nvd.client._params import CVE_HISTORY_EVENT_NAMES, Operation, parameter_names

D0 = "2024-01-01T00:00:00"
D30 = "2024-01-31T00:00:00"
VMS = "cpe:2.3:o:linux:linux_kernel"
UUID = "87316812-5f2c-4286-94fe-cc98b9eaef53"

# (case id, operation, kwargs, offending snake_case parameters)
INVALID: list[tuple[str, Operation, dict[str, Any], tuple[str, ...]]] = [
    # --- the seed's error table
    (
        "v2 and v3 metrics",
        "cves",
        {"cvss_v2_metrics": "AV:N", "cvss_v3_metrics": "AV:N"},
        ("cvss_v2_metrics", "cvss_v3_metrics"),
    ),
    (
        "v2 and v3 severity",
        "cves",
        {"cvss_v2_severity": "LOW", "cvss_v3_severity": "LOW"},
        ("cvss_v2_severity", "cvss_v3_severity"),
    ),
    (
        "lastMod start only",
        "cves",
        {"last_mod_start_date": D0},
        ("last_mod_start_date", "last_mod_end_date"),
    ),
    (
        "lastMod end only",
        "cves",
        {"last_mod_end_date": D0},
        ("last_mod_start_date", "last_mod_end_date"),
    ),
    ("pub start only", "cves", {"pub_start_date": D0}, ("pub_start_date", "pub_end_date")),
    ("pub end only", "cves", {"pub_end_date": D0}, ("pub_start_date", "pub_end_date")),
    (
        "change start only",
        "cvehistory",
        {"change_start_date": D0},
        ("change_start_date", "change_end_date"),
    ),
    (
        "change end only",
        "cvehistory",
        {"change_end_date": D0},
        ("change_start_date", "change_end_date"),
    ),
    (
        "cpes lastMod start only",
        "cpes",
        {"last_mod_start_date": D0},
        ("last_mod_start_date", "last_mod_end_date"),
    ),
    (
        "cpematch lastMod end only",
        "cpematch",
        {"last_mod_end_date": D0},
        ("last_mod_start_date", "last_mod_end_date"),
    ),
    (
        "lastMod 121 days",
        "cves",
        {"last_mod_start_date": "2024-01-01T00:00:00", "last_mod_end_date": "2024-05-01T00:00:01"},
        ("last_mod_start_date", "last_mod_end_date"),
    ),
    (
        "pub 120 days and a second",
        "cves",
        {"pub_start_date": datetime(2024, 1, 1), "pub_end_date": datetime(2024, 4, 30, 0, 0, 1)},
        ("pub_start_date", "pub_end_date"),
    ),
    (
        "change 200 days",
        "cvehistory",
        {"change_start_date": "2021-01-01", "change_end_date": "2021-07-20"},
        ("change_start_date", "change_end_date"),
    ),
    (
        "cpes 121 days",
        "cpes",
        {"last_mod_start_date": "2023-01-01", "last_mod_end_date": "2023-05-02"},
        ("last_mod_start_date", "last_mod_end_date"),
    ),
    (
        "cpematch 121 days",
        "cpematch",
        {"last_mod_start_date": "2023-01-01", "last_mod_end_date": "2023-05-02"},
        ("last_mod_start_date", "last_mod_end_date"),
    ),
    (
        "isVulnerable without cpeName",
        "cves",
        {"is_vulnerable": True},
        ("is_vulnerable", "cpe_name"),
    ),
    (
        "keywordExactMatch without keywordSearch",
        "cves",
        {"keyword_exact_match": True},
        ("keyword_exact_match", "keyword_search"),
    ),
    (
        "cpes keywordExactMatch without keywordSearch",
        "cpes",
        {"keyword_exact_match": True},
        ("keyword_exact_match", "keyword_search"),
    ),
    (
        "versionStart without type",
        "cves",
        {"version_start": "1.0", "virtual_match_string": VMS},
        ("version_start", "version_start_type"),
    ),
    (
        "versionStartType without versionStart",
        "cves",
        {"version_start_type": "including", "virtual_match_string": VMS},
        ("version_start_type", "version_start"),
    ),
    (
        "versionEnd without type",
        "cves",
        {"version_end": "2.0", "virtual_match_string": VMS},
        ("version_end", "version_end_type"),
    ),
    (
        "versionEndType without versionEnd",
        "cves",
        {"version_end_type": "excluding", "virtual_match_string": VMS},
        ("version_end_type", "version_end"),
    ),
    (
        "date text not ISO 8601",
        "cves",
        {"pub_start_date": "yesterday", "pub_end_date": "2024-01-02"},
        ("pub_start_date",),
    ),
    (
        "date month 13",
        "cvehistory",
        {"change_start_date": "2021-13-01T00:00:00", "change_end_date": D0},
        ("change_start_date",),
    ),
    # --- the newer rules of the NVD notes
    (
        "v2 and v4 metrics",
        "cves",
        {"cvss_v2_metrics": "AV:N", "cvss_v4_metrics": "AV:N"},
        ("cvss_v2_metrics", "cvss_v4_metrics"),
    ),
    (
        "v3 and v4 metrics",
        "cves",
        {"cvss_v3_metrics": "AV:N", "cvss_v4_metrics": "AV:N"},
        ("cvss_v3_metrics", "cvss_v4_metrics"),
    ),
    (
        "v3 and v4 severity",
        "cves",
        {"cvss_v3_severity": "LOW", "cvss_v4_severity": "HIGH"},
        ("cvss_v3_severity", "cvss_v4_severity"),
    ),
    (
        "v2 and v4 severity",
        "cves",
        {"cvss_v2_severity": "LOW", "cvss_v4_severity": "HIGH"},
        ("cvss_v2_severity", "cvss_v4_severity"),
    ),
    ("kev start only", "cves", {"kev_start_date": D0}, ("kev_start_date", "kev_end_date")),
    (
        "kev 121 days",
        "cves",
        {"kev_start_date": "2023-01-01", "kev_end_date": "2023-05-02"},
        ("kev_start_date", "kev_end_date"),
    ),
    (
        "end before start",
        "cves",
        {"pub_start_date": D30, "pub_end_date": D0},
        ("pub_start_date", "pub_end_date"),
    ),
    (
        "versionStart without virtualMatchString",
        "cves",
        {"version_start": "1.0", "version_start_type": "including"},
        ("version_start", "virtual_match_string"),
    ),
    (
        "versionEnd without virtualMatchString",
        "cves",
        {"version_end": "1.0", "version_end_type": "excluding"},
        ("version_end", "virtual_match_string"),
    ),
    (
        "version range with a versioned virtualMatchString",
        "cves",
        {
            "version_end": "2",
            "version_end_type": "excluding",
            "virtual_match_string": "cpe:2.3:o:linux:linux_kernel:2.6",
        },
        ("virtual_match_string", "version_start", "version_end"),
    ),
    (
        "isVulnerable with virtualMatchString",
        "cves",
        {"is_vulnerable": True, "cpe_name": "cpe:2.3:o:a:b:1", "virtual_match_string": VMS},
        ("is_vulnerable", "virtual_match_string"),
    ),
    ("cveId lower digits", "cves", {"cve_id": "CVE-2021-123"}, ("cve_id",)),
    ("cveId two-digit year", "cves", {"cve_id": "CVE-21-12345"}, ("cve_id",)),
    ("cveId garbage", "cvehistory", {"cve_id": "log4shell"}, ("cve_id",)),
    ("cpematch cveId garbage", "cpematch", {"cve_id": "CVE2022-32223"}, ("cve_id",)),
    ("cveIds one bad", "cves", {"cve_ids": ["CVE-2021-44228", "CVE-1"]}, ("cve_ids",)),
    (
        "cveIds over 100",
        "cves",
        {"cve_ids": [f"CVE-2021-{i:05d}" for i in range(101)]},
        ("cve_ids",),
    ),
    ("cveIds empty", "cves", {"cve_ids": []}, ("cve_ids",)),
    ("cweId bare number", "cves", {"cwe_id": "79"}, ("cwe_id",)),
    ("cweId wrong prefix", "cves", {"cwe_id": "CVE-79"}, ("cwe_id",)),
    ("cpeNameId not a UUID", "cpes", {"cpe_name_id": "not-a-uuid"}, ("cpe_name_id",)),
    (
        "cpes matchCriteriaId short UUID",
        "cpes",
        {"match_criteria_id": UUID[:-1]},
        ("match_criteria_id",),
    ),
    (
        "cpematch matchCriteriaId not a UUID",
        "cpematch",
        {"match_criteria_id": "x"},
        ("match_criteria_id",),
    ),
    ("cves resultsPerPage 2001", "cves", {"results_per_page": 2001}, ("results_per_page",)),
    (
        "history resultsPerPage 5001",
        "cvehistory",
        {"results_per_page": 5001},
        ("results_per_page",),
    ),
    ("cpes resultsPerPage 10001", "cpes", {"results_per_page": 10001}, ("results_per_page",)),
    ("cpematch resultsPerPage 501", "cpematch", {"results_per_page": 501}, ("results_per_page",)),
    ("resultsPerPage negative", "cves", {"results_per_page": -1}, ("results_per_page",)),
    ("resultsPerPage not an int", "cves", {"results_per_page": "10"}, ("results_per_page",)),
    ("resultsPerPage bool", "cves", {"results_per_page": True}, ("results_per_page",)),
    ("startIndex negative", "cpes", {"start_index": -5}, ("start_index",)),
    ("v2 severity CRITICAL", "cves", {"cvss_v2_severity": "CRITICAL"}, ("cvss_v2_severity",)),
    ("v3 severity NONE", "cves", {"cvss_v3_severity": "NONE"}, ("cvss_v3_severity",)),
    ("v4 severity bogus", "cves", {"cvss_v4_severity": "SEVERE"}, ("cvss_v4_severity",)),
    (
        "versionStartType bogus",
        "cves",
        {"version_start": "1", "version_start_type": "inclusive", "virtual_match_string": VMS},
        ("version_start_type",),
    ),
    (
        "versionEndType bogus",
        "cves",
        {"version_end": "1", "version_end_type": "upto", "virtual_match_string": VMS},
        ("version_end_type",),
    ),
    ("eventName bogus", "cvehistory", {"event_name": "CVE Deleted"}, ("event_name",)),
    ("cveTag bogus", "cves", {"cve_tag": "contested"}, ("cve_tag",)),
    ("cpeName not CPE 2.3", "cves", {"cpe_name": "cpe:/a:apache:log4j"}, ("cpe_name",)),
    (
        "cpeMatchString INVALID prefix",
        "cpes",
        {"cpe_match_string": "INVALID:2.3:*:Microsoft"},
        ("cpe_match_string",),
    ),
    ("cpeName 14 fields", "cves", {"cpe_name": "cpe:2.3" + ":a" * 12}, ("cpe_name",)),
    (
        "matchStringSearch partial",
        "cpematch",
        {"match_string_search": "cpe:2.3:a:apache:log4j"},
        ("match_string_search",),
    ),
    (
        "matchStringSearch 14 fields",
        "cpematch",
        {"match_string_search": "cpe:2.3:a:apache:log4j" + ":*" * 9},
        ("match_string_search",),
    ),
    (
        "cpeName without a version",
        "cves",
        {"cpe_name": "cpe:2.3:a:laravel:framework"},
        ("cpe_name",),
    ),
    ("cpeName with a * vendor", "cves", {"cpe_name": "cpe:2.3:a:*:framework:1.0"}, ("cpe_name",)),
    ("cpeName with part x", "cves", {"cpe_name": "cpe:2.3:x:laravel:framework:1.0"}, ("cpe_name",)),
    (
        "virtualMatchString with part x",
        "cves",
        {"virtual_match_string": "cpe:2.3:x:linux"},
        ("virtual_match_string",),
    ),
    (
        "cpeMatchString ending in a lone backslash",
        "cpes",
        {"cpe_match_string": "cpe:2.3:a:vendor\\"},
        ("cpe_match_string",),
    ),
    ("empty keywordSearch", "cves", {"keyword_search": "  "}, ("keyword_search",)),
    ("flag not a bool", "cves", {"has_kev": "yes"}, ("has_kev",)),
    (
        "date wrong type",
        "cves",
        {"pub_start_date": 20240101, "pub_end_date": D0},
        ("pub_start_date",),
    ),
    ("text wrong type", "cves", {"source_identifier": 3}, ("source_identifier",)),
]


@pytest.mark.parametrize(
    ("operation", "kwargs", "offending"),
    [case[1:] for case in INVALID],
    ids=[case[0] for case in INVALID],
)
def test_invalid_arguments_are_rejected_naming_the_parameters(
    operation: Operation, kwargs: dict[str, Any], offending: tuple[str, ...]
) -> None:
    with pytest.raises(ValueError, match=r"\w") as caught:
        build_query(operation, kwargs)
    error = caught.value
    assert isinstance(error, InvalidQuery)
    assert isinstance(error, QueryError)
    assert set(error.parameters) >= set(offending[:1])
    message = str(error)
    for name in offending:
        assert name in message, (name, message)


def test_unknown_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="cpeName"):
        build_query("cves", {"cpeName": "cpe:2.3:a:x:y"})
    with pytest.raises(TypeError, match="event_name"):
        build_query("cves", {"event_name": "Reanalysis"})


# --- accepted values -------------------------------------------------------------------


class Severity(enum.Enum):  # what nvd_api's CVSS_V3_SEVERITY enum looks like
    HIGH = "HIGH"


VALID: list[tuple[str, Operation, dict[str, Any], dict[str, str | None]]] = [
    ("nothing", "cves", {}, {}),
    ("None and False mean absent", "cves", {"cve_id": None, "has_kev": False}, {}),
    (
        "flags are bare",
        "cves",
        {
            "has_cert_alerts": True,
            "has_cert_notes": True,
            "has_kev": True,
            "has_oval": True,
            "no_rejected": True,
        },
        {
            "hasCertAlerts": None,
            "hasCertNotes": None,
            "hasKev": None,
            "hasOval": None,
            "noRejected": None,
        },
    ),
    ("cveId upper-cased", "cves", {"cve_id": "cve-2021-44228"}, {"cveId": "CVE-2021-44228"}),
    (
        "cveIds list",
        "cves",
        {"cve_ids": ["CVE-2021-44228", "cve-2022-0001"]},
        {"cveIds": "CVE-2021-44228,CVE-2022-0001"},
    ),
    (
        "cveIds text",
        "cves",
        {"cve_ids": "CVE-2021-44228,CVE-2022-0001"},
        {"cveIds": "CVE-2021-44228,CVE-2022-0001"},
    ),
    ("cweId", "cves", {"cwe_id": "cwe-79"}, {"cweId": "CWE-79"}),
    ("cweId noinfo", "cves", {"cwe_id": "nvd-cwe-NOINFO"}, {"cweId": "NVD-CWE-noinfo"}),
    ("cweId other", "cves", {"cwe_id": "NVD-CWE-Other"}, {"cweId": "NVD-CWE-Other"}),
    (
        "severity enum object and case",
        "cves",
        {"cvss_v3_severity": Severity.HIGH, "cvss_v3_metrics": "AV:N/AC:L"},
        {"cvssV3Metrics": "AV:N/AC:L", "cvssV3Severity": "HIGH"},
    ),
    (
        "v4",
        "cves",
        {"cvss_v4_metrics": "AV:A/AC:H", "cvss_v4_severity": "critical"},
        {"cvssV4Metrics": "AV:A/AC:H", "cvssV4Severity": "CRITICAL"},
    ),
    ("v2 severity", "cves", {"cvss_v2_severity": "medium"}, {"cvssV2Severity": "MEDIUM"}),
    ("cveTag lower-cased", "cves", {"cve_tag": "Disputed"}, {"cveTag": "disputed"}),
    (
        "isVulnerable with cpeName",
        "cves",
        {"cpe_name": "cpe:2.3:a:laravel:framework:8.83.27", "is_vulnerable": True},
        {"cpeName": "cpe:2.3:a:laravel:framework:8.83.27", "isVulnerable": None},
    ),
    (
        "keyword pair",
        "cves",
        {"keyword_search": "Microsoft Outlook", "keyword_exact_match": True},
        {"keywordExactMatch": None, "keywordSearch": "Microsoft Outlook"},
    ),
    (
        "version range trio",
        "cves",
        {
            "virtual_match_string": VMS,
            "version_start": "2.2",
            "version_start_type": "Including",
            "version_end": "2.6",
            "version_end_type": "excluding",
        },
        {
            "versionEnd": "2.6",
            "versionEndType": "excluding",
            "versionStart": "2.2",
            "versionStartType": "including",
            "virtualMatchString": VMS,
        },
    ),
    (
        "exactly 120 days",
        "cves",
        {"pub_start_date": "2024-01-01T00:00:00", "pub_end_date": "2024-04-30T00:00:00"},
        {
            "pubStartDate": "2024-01-01T00:00:00.000+00:00",
            "pubEndDate": "2024-04-30T00:00:00.000+00:00",
        },
    ),
    (
        "kev window",
        "cves",
        {"kev_start_date": date(2023, 1, 1), "kev_end_date": date(2023, 2, 1)},
        {
            "kevStartDate": "2023-01-01T00:00:00.000+00:00",
            "kevEndDate": "2023-02-01T00:00:00.000+00:00",
        },
    ),
    (
        "history",
        "cvehistory",
        {
            "cve_id": "CVE-2019-1010218",
            "event_name": "cve rejected",
            "change_start_date": "2021-08-04",
            "change_end_date": "2021-10-23",
            "results_per_page": 5000,
            "start_index": 0,
        },
        {
            "changeStartDate": "2021-08-04T00:00:00.000+00:00",
            "changeEndDate": "2021-10-23T00:00:00.000+00:00",
            "cveId": "CVE-2019-1010218",
            "eventName": "CVE Rejected",
            "resultsPerPage": "5000",
            "startIndex": "0",
        },
    ),
    (
        "cpes",
        "cpes",
        {
            "cpe_name_id": UUID,
            "cpe_match_string": "cpe:2.3:a:microsoft:access",
            "keyword_search": "Microsoft Access",
            "keyword_exact_match": True,
            "match_criteria_id": UUID,
            "results_per_page": 10000,
        },
        {
            "cpeNameId": UUID.upper(),
            "cpeMatchString": "cpe:2.3:a:microsoft:access",
            "keywordExactMatch": None,
            "keywordSearch": "Microsoft Access",
            "matchCriteriaId": UUID.upper(),
            "resultsPerPage": "10000",
        },
    ),
    (
        "cpematch",
        "cpematch",
        {
            "cve_id": "CVE-2022-32223",
            "match_string_search": "cpe:2.3:a:apache:log4j" + ":*" * 8,
            "results_per_page": 500,
        },
        {
            "cveId": "CVE-2022-32223",
            "matchStringSearch": "cpe:2.3:a:apache:log4j" + ":*" * 8,
            "resultsPerPage": "500",
        },
    ),
    (
        "zero page",
        "cves",
        {"results_per_page": 0, "start_index": 0},
        {"resultsPerPage": "0", "startIndex": "0"},
    ),
]


@pytest.mark.parametrize(
    ("operation", "kwargs", "expected"),
    [case[1:] for case in VALID],
    ids=[case[0] for case in VALID],
)
def test_valid_arguments_translate_to_wire_names(
    operation: Operation, kwargs: dict[str, Any], expected: dict[str, str | None]
) -> None:
    assert build_query(operation, kwargs) == expected


@pytest.mark.parametrize("event", CVE_HISTORY_EVENT_NAMES)
def test_every_event_name_is_accepted(event: str) -> None:
    assert build_query("cvehistory", {"event_name": event.upper()}) == {"eventName": event}


def test_reference_client_parameter_names_are_all_accepted() -> None:
    import inspect

    from nvd_api.client import NvdApiClient

    for method, operation in [
        ("get_cves", "cves"),
        ("get_cve_history", "cvehistory"),
        ("get_cpes", "cpes"),
        ("get_cpe_match", "cpematch"),
    ]:
        reference = set(inspect.signature(getattr(NvdApiClient, method)).parameters) - {"self"}
        ours = set(parameter_names(operation))  # type: ignore[arg-type]
        assert reference <= ours, reference - ours


def test_wire_order_follows_the_parameter_table() -> None:
    query = build_query("cves", {"start_index": 0, "cve_id": "CVE-2021-44228", "has_kev": True})
    assert list(query) == ["cveId", "hasKev", "startIndex"]


# --- dates -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime(2022, 1, 1), "2022-01-01T00:00:00.000+00:00"),
        (
            datetime(2022, 1, 1, 13, 0, tzinfo=timezone(timedelta(hours=1))),
            "2022-01-01T12:00:00.000+00:00",
        ),
        (datetime(2022, 1, 1, 0, 0, 0, 123456, tzinfo=UTC), "2022-01-01T00:00:00.123+00:00"),
        (
            datetime(2021, 12, 31, 19, 0, tzinfo=timezone(timedelta(hours=-5))),
            "2022-01-01T00:00:00.000+00:00",
        ),
    ],
)
def test_format_datetime(value: datetime, expected: str) -> None:
    assert format_datetime(value) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2021-08-04T13:00:00.000+01:00", "2021-08-04T12:00:00.000+00:00"),
        ("2021-08-04T13:00:00Z", "2021-08-04T13:00:00.000+00:00"),
        ("2021-08-04T13:00:00", "2021-08-04T13:00:00.000+00:00"),
        ("2021-08-04 13:00", "2021-08-04T13:00:00.000+00:00"),
        ("2021-08-04T13:00:00.123456", "2021-08-04T13:00:00.123+00:00"),
        ("2020-01-01T00:00:00.000-05:00", "2020-01-01T05:00:00.000+00:00"),
        ("2021-08-04", "2021-08-04T00:00:00.000+00:00"),
    ],
)
def test_iso_text_is_sent_in_utc_with_millis_and_offset(text: str, expected: str) -> None:
    query = build_query("cvehistory", {"change_start_date": text, "change_end_date": text})
    assert query["changeStartDate"] == expected


def test_window_compares_instants_not_wall_clocks() -> None:
    # 120 days apart on the wall clock, but the end is 5 h later in UTC.
    with pytest.raises(InvalidQuery):
        build_query(
            "cves",
            {
                "pub_start_date": "2024-01-01T00:00:00+00:00",
                "pub_end_date": "2024-04-30T00:00:00-05:00",
            },
        )


# --- encoding --------------------------------------------------------------------------


def test_encoding_flags_dates_spaces_and_cpes() -> None:
    query = build_query(
        "cves",
        {
            "cpe_name": "cpe:2.3:a:x:y:1.0:*:*:*:*:*:*:*",
            "cvss_v3_metrics": "AV:N/AC:L",
            "has_kev": True,
            "keyword_search": "Microsoft Exchange",
            "pub_start_date": "2022-01-01T00:00:00",
            "pub_end_date": "2022-02-01T00:00:00+00:00",
        },
    )
    assert encode_query(query) == (
        "cpeName=cpe:2.3:a:x:y:1.0:%2A:%2A:%2A:%2A:%2A:%2A:%2A"
        "&cvssV3Metrics=AV:N%2FAC:L"
        "&hasKev"
        "&keywordSearch=Microsoft%20Exchange"
        "&pubStartDate=2022-01-01T00:00:00.000%2B00:00"
        "&pubEndDate=2022-02-01T00:00:00.000%2B00:00"
    )


def test_encoding_escapes_reserved_characters() -> None:
    assert encode_query({"keywordSearch": "a&b=c+d#e%f"}) == ("keywordSearch=a%26b%3Dc%2Bd%23e%25f")
    assert encode_query({"eventName": "CVE Rejected"}) == "eventName=CVE%20Rejected"
    assert encode_query({}) == ""


# --- windows ---------------------------------------------------------------------------


def test_split_window_covers_the_range_in_120_day_steps() -> None:
    windows = split_window("2023-01-01T00:00:00Z", datetime(2024, 1, 1, tzinfo=UTC))
    assert windows[0][0] == datetime(2023, 1, 1, tzinfo=UTC)
    assert windows[-1][1] == datetime(2024, 1, 1, tzinfo=UTC)
    assert len(windows) == 4
    for (_, end), (start, _) in itertools.pairwise(windows):
        assert end == start
    for start, end in windows:
        assert timedelta(0) < end - start <= timedelta(days=120)
        build_query("cves", {"last_mod_start_date": start, "last_mod_end_date": end})


def test_split_window_edge_cases() -> None:
    moment = datetime(2024, 1, 1, tzinfo=UTC)
    assert split_window(moment, moment) == [(moment, moment)]
    with pytest.raises(ValueError, match="before"):
        split_window(moment, moment - timedelta(seconds=1))
    assert len(split_window(moment, moment + timedelta(days=1), max_range=timedelta(hours=1))) == 24
