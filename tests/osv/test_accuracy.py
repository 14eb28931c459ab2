"""Accuracy of OSV matching on a labelled corpus of the real records of the sample:
versions on both sides of every range edge, labelled by an oracle written apart from
`assay.osv` (bench/_osv_accuracy.py). The full collection's figures are in
docs/performance.md (`python -m bench osv`); this holds them on the sample."""

from __future__ import annotations

import orjson
import pytest
from bench._osv_accuracy import corpus, measure, oracle
from tests.osv.conftest import OSV_ASSETS

from assay.osv.record import OsvRecord, read_record

FLOOR = {"PyPI": (1.0, 1.0), "Go": (1.0, 1.0), "crates.io": (1.0, 1.0)}
"""(precision, recall) per ecosystem: what the sample measures; a drop fails."""


def _records() -> list[tuple[OsvRecord, dict[str, object]]]:
    paths = [
        *(OSV_ASSETS / "pypa").rglob("*.yaml"),
        *(OSV_ASSETS / "go").glob("*.json"),
        *(OSV_ASSETS / "rustsec").glob("*.json"),
        *(OSV_ASSETS / "recorded" / "records").iterdir(),
    ]
    records = [read_record(path.read_bytes(), str(path)) for path in sorted(paths)]
    return [(record, orjson.loads(record.raw)) for record in records]


def test_precision_and_recall_per_ecosystem_hold() -> None:
    cases = corpus(_records())
    scores = measure(cases)
    assert set(scores) == set(FLOOR)
    for ecosystem, (precision, recall) in FLOOR.items():
        score = scores[ecosystem]
        assert score.tp >= 50, (ecosystem, score)
        assert score.tn >= 50, (ecosystem, score)
        assert score.precision >= precision, (ecosystem, score.misses[:10])
        assert score.recall >= recall, (ecosystem, score.misses[:10])


@pytest.mark.parametrize(
    ("version", "affected"),
    [("0.1", True), ("1.26.16", True), ("1.26.17", False), ("1.26.18", False),
     ("2.0.0", True), ("1.99", False), ("2.0.5", True), ("2.0.6", False), ("2.0.7", False)],
)  # fmt: skip
def test_the_oracle_on_a_record_with_unsorted_events(version: str, affected: bool) -> None:
    path = OSV_ASSETS / "pypa" / "vulns" / "urllib3" / "PYSEC-2023-192.yaml"
    document = orjson.loads(read_record(path.read_bytes(), str(path)).raw)
    entry = dict(document["affected"][0], versions=[])  # the ranges alone
    assert oracle(entry, "PyPI", version) is affected
