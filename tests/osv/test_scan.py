"""`assay scan` with OSV records: purls matched by ecosystem and name, findings of NVD
and OSV about one vulnerability merged under its CVE, on every backend."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.conftest import backends, make_store_url
from tests.osv.conftest import osv_sample_paths

from assay.audit.model import Cvss, FindingSource, Vulnerability
from assay.audit.osv_match import merge_findings
from assay.audit.severity import Rating, choose_severity


@pytest.fixture(scope="module", params=backends())
def osv_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The bundled NVD sample and the OSV sample, in one store of each backend."""
    from assay._cli import main

    folder = tmp_path_factory.mktemp(f"osv-scan-{request.param}")
    for url in make_store_url(request.param, folder):
        assert main(["nvd", "import", "--store", url, "--bundled", "--json"]) == 0
        paths = [str(p) for p in osv_sample_paths()]
        assert main(["osv", "import", "--store", url, "--json", *paths]) == 0
        yield url


def _scan(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], url: str, *argv: str
) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = cli("scan", "--store", url, "--format", "json", *argv)
    return code, json.loads(capsys.readouterr().out)


def _findings(result: dict[str, Any], ref: str) -> dict[str, dict[str, Any]]:
    (component,) = [c for c in result["components"] if c["ref"] == ref]
    return {v["id"]: v for v in component["vulnerabilities"]}


def test_nvd_and_osv_findings_of_one_cve_are_one_finding(
    osv_store_url: str, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, result = _scan(cli, capsys, osv_store_url, "--purl", "pkg:pypi/urllib3@1.26.5")
    assert code == 0
    assert result["store"]["sources"] == ["nvd", "osv"]
    found = _findings(result, "urllib3@1.26.5")
    merged = found["CVE-2023-45803"]
    assert merged["aliases"] == ["GHSA-g4mx-q9vg-27p4", "PYSEC-2023-212"]
    assert [(s["source"], s["id"]) for s in merged["sources"]] == [
        ("nvd", "CVE-2023-45803"),
        ("osv", "GHSA-g4mx-q9vg-27p4"),
        ("osv", "PYSEC-2023-212"),
    ]
    assert merged["sources"][2]["rule"].startswith("affected[0] PyPI/urllib3: ECOSYSTEM")
    assert merged["fixedIn"] == "1.26.18"
    # Found through OSV only (NVD's sample does not hold it): named by its CVE alias.
    only_osv = found["CVE-2023-43804"]
    assert only_osv["aliases"] == ["GHSA-v845-jxx5-vc9f", "PYSEC-2023-192"]
    assert [s["source"] for s in only_osv["sources"]] == ["osv"]
    # Each id once, whatever the number of records that name it.
    ids = [i for v in found.values() for i in (v["id"], *v["aliases"])]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.26.17", {"CVE-2023-45803"}),  # at the fix of CVE-2023-43804
        ("1.26.18", set()),  # at the fix of both
        ("2.0.6", {"CVE-2023-45803"}),
        ("2.0.7", set()),
    ],
)
def test_range_edges_of_real_records(
    osv_store_url: str,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    version: str,
    expected: set[str],
) -> None:
    _, result = _scan(cli, capsys, osv_store_url, "--purl", f"pkg:pypi/urllib3@{version}")
    found = set(_findings(result, f"urllib3@{version}"))
    assert found & {"CVE-2023-43804", "CVE-2023-45803"} == expected


def test_min_confidence_keeps_exact_purl_matches(
    osv_store_url: str, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    _, result = _scan(
        cli,
        capsys,
        osv_store_url,
        "--min-confidence",
        "1.0",
        "--purl",
        "pkg:pypi/requests@2.19.0",
        "pkg:golang/github.com/treeverse/lakefs@v0.50.0",
        "pkg:maven/log4j/log4j@1.2.17",
    )
    components = {c["ref"]: c for c in result["components"]}
    requests = components["requests@2.19.0"]
    assert requests["identifiedBy"] == "purl"
    assert requests["confidence"] == 1.0
    assert requests["osvPackage"] == {"ecosystem": "PyPI", "name": "requests"}
    assert set(_findings(result, "requests@2.19.0")) == {"CVE-2018-18074", "CVE-2023-32681"}
    assert "GO-2022-0375" in _findings(result, "github.com/treeverse/lakefs@v0.50.0")
    assert "CVE-2019-17571" in _findings(result, "log4j/log4j@1.2.17")


def test_a_guessed_cpe_does_not_hide_what_the_purl_finds(
    osv_store_url: str,
    cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    # As syft writes it: a CPE guessed from the package name.
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "version": 1,
        "components": [
            {
                "type": "library",
                "bom-ref": "urllib3",
                "name": "urllib3",
                "version": "1.26.5",
                "purl": "pkg:pypi/urllib3@1.26.5",
                "cpe": "cpe:2.3:a:python-urllib3:python-urllib3:1.26.5:*:*:*:*:*:*:*",
            }
        ],
    }
    path = tmp_path / "bom.json"
    path.write_text(json.dumps(bom))
    _, result = _scan(cli, capsys, osv_store_url, str(path))
    (component,) = result["components"]
    assert component["identifiedBy"] == "cpe"
    assert component["osvPackage"] == {"ecosystem": "PyPI", "name": "urllib3"}
    assert {"CVE-2023-43804", "CVE-2023-45803"} <= {v["id"] for v in component["vulnerabilities"]}


def test_a_purl_no_source_knows_is_unidentified_with_the_reason(
    osv_store_url: str, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    _, result = _scan(cli, capsys, osv_store_url, "--purl", "pkg:pypi/no-such-package-x@1.0")
    assert result["components"] == []
    (entry,) = result["unidentified"]
    assert entry["reason"].endswith("no OSV record names PyPI package 'no-such-package-x'")


def test_sources_choose_what_is_read(
    osv_store_url: str, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    _, nvd = _scan(
        cli, capsys, osv_store_url, "--sources", "nvd", "--purl", "pkg:pypi/urllib3@1.26.5"
    )
    assert nvd["store"]["sources"] == ["nvd"]
    assert set(_findings(nvd, "urllib3@1.26.5")) == {"CVE-2023-45803"}
    assert [s["source"] for s in _findings(nvd, "urllib3@1.26.5")["CVE-2023-45803"]["sources"]] == [
        "nvd"
    ]
    _, osv = _scan(
        cli, capsys, osv_store_url, "--sources", "osv", "--purl", "pkg:pypi/urllib3@1.26.5"
    )
    assert osv["store"]["sources"] == ["osv"]
    (component,) = osv["components"]
    assert component["cpes"] == []
    assert {s["source"] for v in component["vulnerabilities"] for s in v["sources"]} == {"osv"}
    capsys.readouterr()
    assert (
        cli("scan", "--store", osv_store_url, "--sources", "nvd,ghsa", "--purl", "pkg:pypi/x@1")
        == 2
    )
    assert "--sources: expected some of nvd, osv, cve5, found 'ghsa'" in capsys.readouterr().err


# -- the merge and the severity order, as pure functions ----------------------------------


def _finding(
    id_: str, source: str, *, aliases: tuple[str, ...] = (), severity: str | None = None,
    rated_by: str | None = None, conditional: bool = False,
) -> Vulnerability:  # fmt: skip
    return Vulnerability(
        id=id_,
        severity=severity,
        cvss=None if severity is None else Cvss("3.1", 5.0, "CVSS:3.1/x"),
        kev=False,
        cwes=(),
        match_criteria_id=None,
        fixed_in=None,
        conditional=conditional,
        aliases=aliases,
        sources=(FindingSource(source, id_, "rule"),),
        rated_by=rated_by,
    )


def test_aliases_join_findings_transitively_under_the_cve() -> None:
    ghsa = _finding("GHSA-a", "osv", aliases=("PYSEC-1",), severity="LOW", rated_by="osv-word")
    pysec = _finding("PYSEC-1", "osv", aliases=("CVE-2020-1", "GHSA-a"))
    nvd = _finding("CVE-2020-1", "nvd", severity="HIGH", rated_by="nvd")
    other = _finding("GHSA-b", "osv")
    (first, second) = merge_findings([[nvd], [ghsa, pysec, other]])
    assert first.id == "CVE-2020-1"
    assert first.aliases == ("GHSA-a", "PYSEC-1")
    assert first.severity == "HIGH"  # NVD's rating before an OSV word
    assert [s.id for s in first.sources] == ["CVE-2020-1", "GHSA-a", "PYSEC-1"]
    assert second.id == "GHSA-b"


def test_the_severity_order() -> None:
    ratings = [
        Rating("osv-word", "LOW"),
        Rating("osv", "MEDIUM", Cvss("3.1", 5.0, "v")),
        Rating("adp", "HIGH", Cvss("3.1", 7.5, "v")),
        Rating("cna", "CRITICAL", Cvss("3.1", 9.8, "v")),
        Rating("cna", "HIGH", Cvss("4.0", 8.0, "v")),
        Rating("nvd", "MEDIUM", Cvss("2.0", 5.0, "v")),
        Rating("nvd", "LOW", Cvss("3.1", 3.0, "v")),
    ]
    order = []
    while ratings:
        chosen = choose_severity(ratings)
        assert chosen is not None
        order.append((chosen.source, chosen.severity))
        ratings.remove(chosen)
    assert order == [
        ("nvd", "LOW"),  # NVD first; its newest CVSS version first
        ("cna", "HIGH"),  # CVSS 4.0 before 3.1
        ("cna", "CRITICAL"),
        ("adp", "HIGH"),
        ("osv", "MEDIUM"),
        ("osv-word", "LOW"),
        ("nvd", "MEDIUM"),  # CVSS 2.0 last, whoever gave it (records from before 2016)
    ]
    assert choose_severity([Rating("osv-word", None)]) is None


def test_post_api_scan_answers_from_osv_records_alone(
    tmp_path: Path, cli: Callable[..., int]
) -> None:
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from assay.nvd.storage import open_store
    from assay.web.scan_api import scan_routes

    url = f"sqlite:///{tmp_path / 'osv-only.db'}"
    assert cli("osv", "import", "--store", url, "--json", *map(str, osv_sample_paths())) == 0
    store = open_store(url)
    try:
        with TestClient(Starlette(routes=scan_routes(store))) as client:
            answer = client.post("/api/scan?purl=pkg:pypi/requests@2.19.0")
        assert answer.status_code == 200, answer.text
        result = answer.json()
        assert result["store"]["sources"] == ["osv"]
        assert set(_findings(result, "requests@2.19.0")) == {"CVE-2018-18074", "CVE-2023-32681"}
    finally:
        store.close()


_ids = st.sampled_from(
    ["CVE-2020-1", "CVE-2020-2", "GHSA-a", "GHSA-b", "PYSEC-1", "PYSEC-2", "GO-1", "RUSTSEC-1"]
)


@given(
    st.lists(
        st.tuples(_ids, st.lists(_ids, max_size=3), st.sampled_from(["nvd", "osv"])),
        max_size=8,
    )
)
def test_merged_findings_partition_the_ids(parts: list[tuple[str, list[str], str]]) -> None:
    findings = [
        _finding(id_, source, aliases=tuple(a for a in aliases if a != id_))
        for id_, aliases, source in parts
    ]
    merged = merge_findings([findings])
    names = [{v.id, *v.aliases} for v in merged]
    every = [i for group in names for i in group]
    assert len(every) == len(set(every))  # each id in one finding only
    assert set(every) == {i for f in findings for i in (f.id, *f.aliases)}
    for finding, group in zip(merged, names, strict=True):
        cves = sorted(i for i in group if i.startswith("CVE-"))
        if cves:
            assert finding.id.startswith("CVE-")
        assert finding.id not in finding.aliases
    distinct = {s for f in findings for s in f.sources}
    assert sum(len(v.sources) for v in merged) == len(distinct)


def test_vdr_and_sarif_name_osv_advisories_and_aliases(
    osv_store_url: str, cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    purls = ("pkg:pypi/urllib3@1.26.5", "pkg:golang/github.com/treeverse/lakefs@v0.50.0")
    capsys.readouterr()
    assert cli("scan", "--store", osv_store_url, "--format", "cyclonedx", "--purl", *purls) == 0
    vdr = capsys.readouterr().out
    assert JsonStrictValidator(SchemaVersion.V1_5).validate_str(vdr) is None
    entries = {v["id"]: v for v in json.loads(vdr)["vulnerabilities"]}
    assert entries["GO-2022-0375"]["source"] == {
        "name": "OSV",
        "url": "https://osv.dev/vulnerability/GO-2022-0375",
    }
    assert entries["CVE-2023-45803"]["source"]["name"] == "NVD"
    assert [r["id"] for r in entries["CVE-2023-45803"]["references"]] == [
        "GHSA-g4mx-q9vg-27p4",
        "PYSEC-2023-212",
    ]
    assert cli("scan", "--store", osv_store_url, "--format", "sarif", "--purl", *purls) == 0
    rules = {
        r["id"]: r
        for r in json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    }
    assert rules["GO-2022-0375"]["helpUri"] == "https://osv.dev/vulnerability/GO-2022-0375"
