"""Keyless snapshots: `assay store import --identity ... --issuer ...` verifies a Sigstore
bundle beside the snapshot, offline, against the shipped trusted roots.

Signing (`assay store export --identity-token`) needs Fulcio and Rekor on the network and
an OIDC token, so it cannot run here; what can run offline is every step of the
verification with a real public-good bundle (sigstore-js 2.1.0's npm provenance, see
tests/assets/sigstore/SOURCES.md): its certificate chain, log proof and DSSE signature
verify, and the steps after them refuse it for the reasons they exist for (another
identity, a statement that is not about this snapshot), before any store is opened."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.nvd.storage import open_store
from assay.snapshot.store_io import export_snapshot

Cli = Callable[..., int]
BUNDLE = (
    Path(__file__).parent.parent
    / "assets"
    / "sigstore"
    / "github-cli"
    / "sigstore-js-2.1.0-bundle.json"
)
SIGNER = "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main"
ISSUER = "https://token.actions.githubusercontent.com"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    store = open_store(f"sqlite:///{tmp_path / 'source.db'}")
    path = tmp_path / "full.snap"
    try:
        with path.open("wb") as out:
            export_snapshot(store, out)
    finally:
        store.close()
    return path


def _import(cli: Cli, tmp_path: Path, snapshot: Path, identity: str, issuer: str) -> int:
    url = f"sqlite:///{tmp_path / 'target.db'}"
    return cli(
        "store", "import", str(snapshot), "--store", url, "--create",
        "--identity", identity, "--issuer", issuer,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("identity", "issuer", "reason"),
    [
        pytest.param(
            "https://github.com/assay/assay/.github/workflows/snapshots.yml@refs/heads/main",
            ISSUER,
            f"signed by {SIGNER} ({ISSUER}), not an identity given as trusted",
            id="another identity",
        ),
        pytest.param(SIGNER, "https://accounts.google.com", "not an identity", id="another issuer"),
        pytest.param(
            SIGNER, ISSUER, "expected urn:assay:store-snapshot:v1", id="not a snapshot statement"
        ),
        pytest.param(
            r"/https://github\.com/sigstore/.*/",
            ISSUER,
            "expected urn:assay:store-snapshot:v1",
            id="identity as a pattern",
        ),
    ],
)
def test_a_real_bundle_verifies_and_is_refused_for_what_it_says(  # noqa: PLR0917 - params
    snapshot: Path,
    tmp_path: Path,
    cli: Cli,
    capsys: pytest.CaptureFixture[str],
    identity: str,
    issuer: str,
    reason: str,
) -> None:
    shutil.copy(BUNDLE, snapshot.with_name(snapshot.name + ".sigstore.json"))
    assert _import(cli, tmp_path, snapshot, identity, issuer) == 2
    err = capsys.readouterr().err
    assert reason in err
    assert not (tmp_path / "target.db").exists()


def test_a_changed_bundle_or_none_is_refused(
    snapshot: Path, tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _import(cli, tmp_path, snapshot, SIGNER, ISSUER) == 2
    assert "expected the Sigstore bundle" in capsys.readouterr().err
    bundle = json.loads(BUNDLE.read_text())
    signature = bundle["dsseEnvelope"]["signatures"][0]
    signature["sig"] = ("A" if signature["sig"][10] != "A" else "B").join(
        (signature["sig"][:10], signature["sig"][11:])
    )
    snapshot.with_name(snapshot.name + ".sigstore.json").write_text(json.dumps(bundle))
    assert _import(cli, tmp_path, snapshot, SIGNER, ISSUER) == 2
    assert "the Sigstore bundle does not verify" in capsys.readouterr().err
    assert not (tmp_path / "target.db").exists()


def test_keyless_needs_both_identity_and_issuer(
    snapshot: Path, tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'target.db'}"
    code = cli("store", "import", str(snapshot), "--store", url, "--identity", SIGNER)
    assert code == 2
    assert "--identity" in capsys.readouterr().err


def test_an_unusable_identity_token_writes_no_snapshot(
    tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    """Signing fails before the snapshot takes its name: no unsigned file is left at OUT."""
    open_store(f"sqlite:///{tmp_path / 'source.db'}").close()
    out = tmp_path / "full.snap"
    code = cli(
        "store", "export", "--store", f"sqlite:///{tmp_path / 'source.db'}", "--out", str(out),
        "--identity-token", "not-a-token",
    )  # fmt: skip
    assert code == 2
    assert "expected an OIDC identity token" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.db"]
