"""The CVE JSON 5, KEV and EPSS readers over real records, and what they refuse."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.cve5.epss import EpssError, read_scores
from assay.cve5.kev import KevError, read_catalogue
from assay.cve5.record import MAX_DEPTH, Cve5Error, read_record
from assay.errors import IngestError

from .conftest import ASSETS, record_paths

WAZUH = ASSETS / "cve5/CVEProject-cvelistV5/cves/2025/24xxx/CVE-2025-24016.json"
CISA_ADP = "134c704f-9b21-4f2e-91b3-4a467353bcc0"


def test_every_real_record_is_read() -> None:
    records = [read_record(path.read_bytes(), str(path)) for path in record_paths()]
    assert len(records) == 90
    assert all(r.cve_id.startswith("CVE-") for r in records)
    with_adp_cpes = [r for r in records if any(a.cpes for c in r.adp for a in c.affected)]
    assert len(with_adp_cpes) >= 80


def test_a_cisa_adp_container_is_typed() -> None:
    record = read_record(WAZUH.read_bytes(), str(WAZUH))
    assert record.cve_id == "CVE-2025-24016"
    assert record.date_updated == "2025-07-02T15:09:10.475Z"
    assert record.raw == WAZUH.read_bytes()
    (adp,) = record.adp
    assert adp.org_id == CISA_ADP
    assert adp.ssvc is not None
    assert adp.ssvc.exploitation == "active"
    assert adp.ssvc.automatable == "yes"
    assert adp.ssvc.technical_impact == "total"
    assert adp.kev is not None
    assert adp.kev.date_added == "2025-06-10"
    cna = record.cna
    assert cna.cvss[0].base_score == 9.9
    assert cna.cvss[0].version == "3.1"
    assert cna.cwes == (("CWE-502", "CWE-502: Deserialization of Untrusted Data"),)
    assert cna.affected[0].versions[0].version == ">= 4.4.0, < 4.9.1"


def test_a_go_cna_submission_is_read_undated() -> None:
    path = next(p for p in record_paths() if p.name.startswith("GO-"))
    record = read_record(path.read_bytes(), str(path))
    assert record.state == "PUBLISHED"
    assert record.date_updated == ""
    assert record.cna.affected[0].collection_url == "https://pkg.go.dev"


def _broken(change) -> bytes:  # type: ignore[no-untyped-def]
    document = json.loads(WAZUH.read_bytes())
    change(document)
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (
            lambda d: d["containers"]["cna"]["affected"][0]["versions"][0].update(status="bad"),
            "$.containers.cna.affected[0].versions[0].status",
        ),
        (
            lambda d: d["containers"]["cna"]["affected"][0].update(cpes="cpe:2.3:a:x:y"),
            "$.containers.cna.affected[0].cpes",
        ),
        (
            lambda d: d["containers"]["adp"][0]["providerMetadata"].pop("orgId"),
            "$.containers.adp[0].providerMetadata.orgId",
        ),
        (
            lambda d: d["containers"]["cna"]["metrics"][0]["cvssV3_1"].update(baseScore="9.9"),
            "$.containers.cna.metrics[0].cvssV3_1.baseScore",
        ),
        (lambda d: d["cveMetadata"].update(cveId="CVE-25-1"), "$.cveMetadata.cveId"),
        (lambda d: d.update(dataVersion="4.0"), "$.dataVersion"),
        (lambda d: d.update(dataType="OSV"), "$.dataType"),
    ],
)
def test_a_wrong_member_is_named_by_file_and_path(change, where) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(Cve5Error) as raised:
        read_record(_broken(change), "x.json")
    assert raised.value.source == "x.json"
    assert raised.value.position == where
    assert isinstance(raised.value, IngestError)


def test_repeated_keys_depth_and_size_are_refused() -> None:
    with pytest.raises(Cve5Error, match=r"x.json at \$.dataType: duplicate key"):
        read_record(b'{"dataType": "CVE_RECORD", "dataType": "CVE_RECORD"}', "x.json")
    deep = (
        b'{"dataType": "CVE_RECORD", "x": ' + b"[" * (MAX_DEPTH + 2) + b"]" * (MAX_DEPTH + 2) + b"}"
    )
    with pytest.raises(Cve5Error, match="nesting"):
        read_record(deep, "x.json")
    with pytest.raises(Cve5Error, match="expected JSON"):
        read_record(b"{", "x.json")


def test_the_kev_catalogue_is_read() -> None:
    path = ASSETS / "kev/known_exploited_vulnerabilities.json"
    catalogue = read_catalogue(path.read_bytes(), str(path))
    assert catalogue.version == "2025.08.25"
    assert len(catalogue.entries) == 36
    wazuh = next(e for e in catalogue.entries if e.cve_id == "CVE-2025-24016")
    assert (wazuh.date_added, wazuh.due_date) == ("2025-06-10", "2025-07-01")
    assert wazuh.ransomware == "Unknown"


def test_a_broken_kev_entry_is_named() -> None:
    document = json.loads((ASSETS / "kev/known_exploited_vulnerabilities.json").read_bytes())
    document["vulnerabilities"][3]["dueDate"] = "next week"
    with pytest.raises(KevError, match=r"k.json at \$.vulnerabilities\[3\].dueDate"):
        read_catalogue(json.dumps(document).encode(), "k.json")


def test_epss_plain_and_gzip() -> None:
    data = (ASSETS / "epss/example-1.csv").read_bytes()
    plain = read_scores(data, "e.csv")
    assert read_scores(gzip.compress(data), "e.csv.gz") == plain
    assert (plain.model_version, plain.score_date) == ("v2023.03.01", "2025-02-20")
    assert plain.scores[4].cve_id == "CVE-1999-0005"
    assert plain.scores[4].score == 0.91963


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"cve,epss,percentile\n", "line 1"),
        (b"#model_version:v1,score_date:2025-01-01\ncve,score\n", "line 2"),
        (
            b"#model_version:v1,score_date:2025-01-01\ncve,epss,percentile\nCVE-1-1,0.1,0.2\n",
            "line 3",
        ),
        (
            b"#model_version:v1,score_date:2025-01-01\ncve,epss,percentile\nCVE-2020-1234,1.5,0.2\n",
            "line 3",
        ),
        (b"\x1f\x8b\x08\x00garbage", ""),
    ],
)
def test_a_broken_epss_line_is_named(data: bytes, where: str) -> None:
    with pytest.raises(EpssError) as raised:
        read_scores(data, "e.csv")
    assert raised.value.position == where


def _paths(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    found: list[tuple[object, ...]] = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths(child, (*path, index)))
    return found


JSON_VALUES = st.recursive(
    # JSON as the one grammar reads it: no Infinity, integers within 64 bits.
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(data=st.data())
def test_any_member_replaced_by_any_json_is_read_or_refused_by_path(data: st.DataObject) -> None:
    document = json.loads(WAZUH.read_bytes())
    paths = _paths(document)[1:]
    path = data.draw(st.sampled_from(paths))
    target: Any = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(JSON_VALUES)
    refused: Cve5Error | None = None
    try:
        read_record(json.dumps(document).encode(), "x.json")
    except Cve5Error as error:  # anything else (a TypeError, a KeyError) fails the test
        refused = error
    if refused is not None:
        assert refused.source == "x.json"
        assert refused.position.startswith("$")
