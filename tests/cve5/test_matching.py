"""Matching through CVE 5 records: CISA-ADP's CPE ranges, the CNA's entries, what NVD has
analysed left to NVD, KEV and EPSS on every finding, `--fail-on epss>=X` and `source=`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay._cli import main
from assay.audit.versions import compare_in
from assay.cve5.ranges import entry_status
from assay.cve5.record import Affected, VersionEntry
from assay.errors import InputError
from assay.policy.vulnerabilities import parse_fail_on

from .conftest import ASSETS, EPSS_FILE, KEV_FILE

NVD_RECORDS = sorted((ASSETS / "nvd").glob("*.json"))


@pytest.fixture
def loaded(store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    lines = tmp_path / "nvd.jsonl"
    lines.write_text("".join(json.dumps(json.loads(p.read_bytes())) + "\n" for p in NVD_RECORDS))
    for args in (
        ["nvd", "import", str(lines)],
        ["cve", "import", str(ASSETS)],
        ["kev", "import", str(KEV_FILE)],
        ["epss", "import", str(EPSS_FILE)],
    ):
        assert main([*args, "--store", store_url]) == 0
    capsys.readouterr()
    return store_url


def _scan(
    store: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *components: dict[str, Any],
    fail_on: tuple[str, ...] = (),
) -> tuple[int, dict[str, Any]]:
    bom = tmp_path / "bom.json"
    bom.write_text(
        json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.5", "components": list(components)})
    )
    extra = ["--fail-on", *fail_on] if fail_on else []
    code = main(["scan", str(bom), "--store", store, "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _cpe(vendor: str, product: str, version: str) -> dict[str, Any]:
    return {
        "type": "application",
        "name": product,
        "version": version,
        "cpe": f"cpe:2.3:a:{vendor}:{product}:{version}:*:*:*:*:*:*:*",
    }


def _ids(document: dict[str, Any]) -> list[list[str]]:
    return [[v["id"] for v in c["vulnerabilities"]] for c in document["components"]]


def test_cisa_adp_cpe_ranges_match_unanalysed_cves(
    loaded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # CVE-2022-25377: CISA-ADP says appwrite from 0.5.0, less than 0.12.2 (no NVD record here).
    code, document = _scan(
        loaded,
        tmp_path,
        capsys,
        _cpe("appwrite", "appwrite", "0.12.1"),
        _cpe("appwrite", "appwrite", "0.12.2"),
        _cpe("appwrite", "appwrite", "0.5.0"),
        _cpe("appwrite", "appwrite", "0.4.9"),
    )
    assert code == 0
    assert _ids(document) == [["CVE-2022-25377"], [], ["CVE-2022-25377"], []]
    finding = document["components"][0]["vulnerabilities"][0]
    assert finding["sources"] == [
        {"source": "cisa-adp", "id": "CVE-2022-25377", "rule": "$.containers.adp[1].affected[0]"}
    ]
    assert finding["fixedIn"] == "0.12.2"


def test_sources_choose_whether_cve5_records_are_read(
    loaded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bom = tmp_path / "bom.json"
    bom.write_text(
        json.dumps(
            {
                "bomFormat": "CycloneDX",
                "specVersion": "1.5",
                "components": [_cpe("appwrite", "appwrite", "0.12.1")],
            }
        )
    )
    found = {}
    for sources in ("nvd", "nvd,cve5", None):
        extra = ["--sources", sources] if sources else []
        main(["scan", str(bom), "--store", loaded, "--format", "json", *extra])
        document = json.loads(capsys.readouterr().out)
        found[sources] = (_ids(document), document["store"]["sources"])
    assert found["nvd"] == ([[]], ["nvd"])  # NVD has not analysed it: nothing without cve5
    assert found["nvd,cve5"] == ([["CVE-2022-25377"]], ["nvd", "cve5"])
    assert found[None] == found["nvd,cve5"]  # by default, every source the store holds


def test_the_cna_range_matches_and_kev_and_epss_are_attached(
    loaded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # CVE-2025-24016: NVD's record is "Awaiting Analysis" (no configurations); the CNA
    # (GitHub) writes ">= 4.4.0, < 4.9.1"; it is in KEV and scored by EPSS.
    code, document = _scan(
        loaded,
        tmp_path,
        capsys,
        _cpe("wazuh", "wazuh", "4.9.0"),
        _cpe("wazuh", "wazuh", "4.9.1"),
        _cpe("wazuh", "wazuh", "4.3.9"),
        fail_on=("epss>=0.9",),
    )
    assert code == 1
    assert _ids(document) == [["CVE-2025-24016"], [], []]
    finding = document["components"][0]["vulnerabilities"][0]
    assert finding["sources"][0]["source"] == "cve5"
    assert finding["sources"][0]["rule"] == "$.containers.cna.affected[0]"
    assert finding["kev"] is True
    assert finding["kevDetail"] == {
        "dateAdded": "2025-06-10",
        "dueDate": "2025-07-01",
        "knownRansomwareCampaignUse": "Unknown",
    }
    assert finding["epss"]["date"] == "2026-08-16"
    assert finding["epss"]["score"] > 0.9
    assert (finding["severity"], finding["cvss"]["version"]) == ("CRITICAL", "3.1")
    code, _ = _scan(
        loaded, tmp_path, capsys, _cpe("wazuh", "wazuh", "4.9.0"), fail_on=("source=cisa-adp",)
    )
    assert code == 0
    code, _ = _scan(
        loaded, tmp_path, capsys, _cpe("wazuh", "wazuh", "4.9.0"), fail_on=("source=cve5,kev",)
    )
    assert code == 1


def test_a_cve_nvd_has_analysed_is_left_to_nvd(
    loaded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # CVE-2022-33891 has NVD configurations and a CVE 5 record: one finding, from NVD.
    _, document = _scan(loaded, tmp_path, capsys, _cpe("apache", "spark", "3.0.3"))
    (finding,) = document["components"][0]["vulnerabilities"]
    assert finding["id"] == "CVE-2022-33891"
    assert [s["source"] for s in finding["sources"]] == ["nvd"]
    assert finding["sources"][0]["rule"] == finding["matchCriteriaId"]
    assert finding["kevDetail"]["dateAdded"] == "2023-03-07"


def test_a_purl_the_go_cna_names_is_identified_and_matched(
    loaded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    purl = "pkg:golang/github.com/cloudflare/golz4@v0.0.0-20140101000000-000000000000"
    _, document = _scan(
        loaded,
        tmp_path,
        capsys,
        {
            "type": "library",
            "name": "golz4",
            "version": "v0.0.0-20140101000000-000000000000",
            "purl": purl,
        },
    )
    (component,) = document["components"]
    assert (component["identifiedBy"], component["confidence"]) == ("purl", 0.7)
    assert [v["id"] for v in component["vulnerabilities"]] == ["CVE-2014-125026"]
    assert document["unidentified"] == []


def test_fail_on_grammar() -> None:
    assert parse_fail_on("epss>=0.5").conditions[0].value == 0.5
    assert parse_fail_on("source=osv,kev").conditions[0].source == "osv"
    for text, message in (("epss>=2", "EPSS probability"), ("source=ghsa", "expected a source")):
        with pytest.raises(InputError, match=message):
            parse_fail_on(text)


@given(
    edges=st.lists(st.integers(0, 30), min_size=2, max_size=2, unique=True).map(sorted),
    probe=st.integers(0, 31),
    inclusive=st.booleans(),
)
def test_a_range_holds_exactly_the_versions_between_its_edges(
    edges: list[int], probe: int, inclusive: bool
) -> None:
    low, high = (f"1.{n}.0" for n in edges)
    entry = VersionEntry(
        version=low,
        status="affected",
        version_type="semver",
        less_than=None if inclusive else high,
        less_than_or_equal=high if inclusive else None,
    )
    affected = Affected("$", "v", "p", None, None, None, (), (entry,), "unaffected")
    version = f"1.{probe}.0"
    inside = edges[0] <= probe and (probe <= edges[1] if inclusive else probe < edges[1])
    found = entry_status(affected, version, lambda a, b: compare_in("npm", a, b))
    assert (found.status == "affected") == inside
    assert found.fixed_in == (None if inclusive or not inside else high)
