"""`assay trust update --online --name github`: GitHub's trusted root through a TUF
repository. A real TUF repository is built here (python-tuf's Metadata API, one ECDSA
key for every role, consistent snapshots as GitHub's repository has them) and served on
loopback; the update verifies it from the bootstrap root, and refuses an altered target."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import pytest

from assay._cli import main
from assay.errors import AttestationError
from assay.sigstore.github_tuf import fetch_github
from assay.sigstore.roots import shipped_root

GITHUB_ROOT = shipped_root("github").data


def _repository(directory: Path, target: bytes) -> bytes:
    """A TUF repository serving `target` as trusted_root.json; returns its root.json."""
    from securesystemslib.signer import CryptoSigner
    from tuf.api.metadata import (
        Metadata,
        MetaFile,
        Root,
        Snapshot,
        TargetFile,
        Targets,
        Timestamp,
    )
    from tuf.api.serialization.json import JSONSerializer

    signer = CryptoSigner.generate_ecdsa()
    expires = datetime.now(UTC) + timedelta(days=7)
    root = Root(expires=expires, consistent_snapshot=True)
    for role in ("root", "targets", "snapshot", "timestamp"):
        root.add_key(signer.public_key, role)
    targets = Targets(expires=expires)
    targets.targets["trusted_root.json"] = TargetFile.from_data("trusted_root.json", target)
    snapshot = Snapshot(expires=expires)
    snapshot.meta["targets.json"] = MetaFile(version=1)
    timestamp = Timestamp(expires=expires, snapshot_meta=MetaFile(version=1))
    serializer = JSONSerializer()
    files = {}
    for name, signed in (
        ("1.root.json", root),
        ("1.targets.json", targets),
        ("1.snapshot.json", snapshot),
        ("timestamp.json", timestamp),
    ):
        metadata = Metadata(signed)
        metadata.sign(signer)
        files[name] = metadata.to_bytes(serializer)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    (directory / "targets").mkdir()
    digest = hashlib.sha256(target).hexdigest()
    (directory / "targets" / f"{digest}.trusted_root.json").write_bytes(target)
    return files["1.root.json"]


@contextmanager
def _serve(directory: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(Quiet, directory=str(directory))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_githubs_root_is_fetched_through_tuf(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    bootstrap = _repository(repository, GITHUB_ROOT)
    with _serve(repository) as url:
        data = fetch_github(url, bootstrap=bootstrap, data_dir=tmp_path / "tuf")
    assert data == GITHUB_ROOT


def test_an_altered_target_is_refused(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    bootstrap = _repository(repository, GITHUB_ROOT)
    target = next((repository / "targets").iterdir())
    target.write_bytes(target.read_bytes().replace(b"GitHub", b"GitHuB"))
    with _serve(repository) as url, pytest.raises(AttestationError) as refused:
        fetch_github(url, bootstrap=bootstrap, data_dir=tmp_path / "tuf")
    assert f"cannot refresh GitHub's trusted root from {url}" in str(refused.value)


def test_a_root_signed_by_another_key_is_refused(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    _repository(repository, GITHUB_ROOT)
    other = tmp_path / "other"
    other.mkdir()
    foreign = _repository(other, GITHUB_ROOT)  # a root the repository was not signed by
    with _serve(repository) as url, pytest.raises(AttestationError):
        fetch_github(url, bootstrap=foreign, data_dir=tmp_path / "tuf")


def test_offline_the_command_says_to_use_a_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("assay.sigstore.github_tuf.GITHUB_TUF_URL", "http://127.0.0.1:9")
    monkeypatch.setattr(
        "assay.sigstore.github_tuf.fetch_github.__defaults__", ("http://127.0.0.1:9",)
    )
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    try:
        code = main(["trust", "update", "--online", "--name", "github"])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert "cannot refresh GitHub's trusted root from http://127.0.0.1:9" in err
    assert "use --from FILE" in err
