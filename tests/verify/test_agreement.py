"""assay's verdicts agree with slsa-verifier's expectations on its own test data."""

from __future__ import annotations

from .agreement import outcomes, summarize


def test_every_decidable_case_agrees() -> None:
    results = list(outcomes())
    table = summarize(results)
    disagreements = [r for r in results if r.got is not None and not r.agrees]
    assert disagreements == []
    gcb = table["Google Cloud Build (full verification)"]
    assert gcb["cases"] == gcb["agree"] == 58
    gha = table["GitHub Actions (checks without Sigstore)"]
    assert gha["cases"] == gha["agree"] == 1098
    assert table["VSA (full verification)"]["agree"] == 3
    # Both verdicts occur, so agreement is not agreement on "always fail".
    decided = [r for r in results if r.got is not None]
    assert {r.got for r in decided} == {"pass", "fail"}
