"""`assay verify-image` against a real registry on loopback.

slsa-verifier's container-generator cases (real cosign attestations in OCI layouts, with
the Fulcio certificate and the Rekor promise in the layer annotations) are pushed to
Debian's `docker-registry` with assay's own client and verified through the command line;
each case must give slsa-verifier's verdict, online and then offline from the cache.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.registry.conftest import ASSETS, push_layout

from assay._cli import main
from assay.registry.reference import Reference

pytestmark = pytest.mark.slow

LAYOUTS = ASSETS / "slsa-verifier"
CASES: list[dict[str, Any]] = json.loads((LAYOUTS / "image-expectations.json").read_text())["cases"]


def _repository(layout: str) -> str:
    version = layout.split("/")[2]  # cli/gha_generic_container/vX.Y.Z/...
    return "slsa/container-" + version.replace(".", "-")


@pytest.fixture(scope="module")
def pushed(registry: str) -> str:
    for layout in sorted({case["image_oci_layout"] for case in CASES}):
        path = LAYOUTS / layout.removeprefix("cli/")
        push_layout(path, Reference(registry, _repository(layout)))
    return registry


@contextlib.contextmanager
def _testing() -> Iterator[None]:
    """slsa-verifier's regression tests run with SLSA_VERIFIER_TESTING."""
    before = os.environ.get("SLSA_VERIFIER_TESTING")
    os.environ["SLSA_VERIFIER_TESTING"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["SLSA_VERIFIER_TESTING"]
        else:
            os.environ["SLSA_VERIFIER_TESTING"] = before


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _testing():
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def _argv(case: dict[str, Any], registry: str, builder_id: str | None) -> list[str]:
    image = f"{registry}/{_repository(case['image_oci_layout'])}@{case['image_digest']}"
    options = case.get("options") or {}
    argv = ["verify-image", image, "--source-uri", options["source_uri"]]
    for flag in ("source_branch", "source_tag", "source_versioned_tag"):
        if options.get(flag) is not None:
            argv += ["--" + flag.replace("_", "-"), options[flag]]
    if builder_id is not None:
        argv += ["--builder-id", builder_id]
    return argv


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_case_gives_slsa_verifiers_verdict_online_then_offline(
    case: dict[str, Any], pushed: str, tmp_path: Path
) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for builder_id in case.get("builder_id_variants") or [None]:
        argv = _argv(case, pushed, builder_id)
        online, _, err = run([*argv, *cache])
        offline, _, offline_err = run([*argv, *cache, "--offline"])
        assert online == offline, (builder_id, err, offline_err)
        if case["expected"] == "pass":
            assert online == 0, (builder_id, err)
        else:  # 2 when assay judges the input itself unusable (a malformed --source-uri)
            assert online in (1, 2), (builder_id, err)
