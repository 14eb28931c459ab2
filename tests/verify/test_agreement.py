"""assay's verdicts agree with slsa-verifier's expectations on its own test data."""

from __future__ import annotations

from .agreement import outcomes, summarize

KEYID_GROUP = "VSA signature with a key id (keyid is a hint in assay)"


def test_every_decidable_case_agrees() -> None:
    results = list(outcomes())
    table = summarize(results)
    disagreements = [r for r in results if r.got is not None and not r.agrees]
    # The only differences are by design: slsa-verifier refuses a VSA signature whose
    # envelope keyid differs from --public-key-id; in DSSE the keyid is only a hint.
    # And a policy repository with `@ref` is compared with the recorded ref (assay keeps
    # the ref it is given); slsa-verifier's --source-uri takes no ref and refuses any.
    by_design = {r.case for r in disagreements if r.group != KEYID_GROUP}
    assert by_design == {"s01325"}
    keyid = [r for r in disagreements if r.group == KEYID_GROUP]
    assert [(r.expected, r.got) for r in keyid] == [("fail", "pass")] * 2
    expected = {
        "Google Cloud Build (full verification)": 58,
        "Google Cloud Build unit checks": 122,
        "GitHub Actions (checks without Sigstore)": 1098,
        "VSA (full verification)": 3,
    }
    for group, count in expected.items():
        assert table[group]["agree"] == count, group
    # Both verdicts occur, so agreement is not agreement on "always fail".
    decided = [r for r in results if r.got is not None]
    assert {r.got for r in decided} == {"pass", "fail"}
