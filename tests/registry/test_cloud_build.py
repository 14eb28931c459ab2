"""`assay verify-image --provenance-path` (Cloud Build): slsa-verifier's 61 cases through
the command line, each `--builder-id` variant; the provenance is read locally, as
slsa-verifier reads it, so no registry is involved."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from assay._cli import main

ASSETS = Path(__file__).resolve().parents[1] / "assets"
CASES: list[dict[str, Any]] = json.loads(
    (ASSETS / "registry" / "slsa-verifier" / "gcb-image-expectations.json").read_text()
)["cases"]
VERIFY = ASSETS / "verify" / "slsa-verifier"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_case_gives_slsa_verifiers_verdict(case: dict[str, Any]) -> None:
    options = case["options"]
    # the image as the case names it (with a tag and a digest, a digest, or mutable)
    image = case.get("image_ref") or f"gcr.io/example/image@{case['image_digest']}"
    base = ["verify-image", image, "--provenance-path", str(VERIFY / case["provenance"])]
    base += ["--source-uri", options["source_uri"]]
    for flag in ("source_branch", "source_tag", "source_versioned_tag"):
        if options.get(flag) is not None:
            base += ["--" + flag.replace("_", "-"), options[flag]]
    for builder_id in case["builder_id_variants"]:
        code, _, err = run([*base, "--builder-id", builder_id])
        if case["expected"] == "pass":
            assert code == 0, (builder_id, err)
        else:
            assert code in (1, 2), (builder_id, err)


def test_without_a_builder_id_exit_2() -> None:
    case = CASES[0]
    code, _, err = run(
        [
            "verify-image",
            case["image_ref"],
            "--provenance-path",
            str(VERIFY / case["provenance"]),
            "--source-uri",
            case["options"]["source_uri"],
        ]
    )
    assert code == 2
    assert "builder_id: expected the builder id" in err
