"""Signed store snapshots: a full one into an empty store, deltas in order, on both
backends; signatures and digests checked before anything is written, and a refused or
broken snapshot leaves the store as it was."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.conftest import backends, make_store_url

from assay._cli.nvd import bundled_files
from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import Store, open_store
from assay.snapshot.format import Manifest, SnapshotError, SnapshotWriter
from assay.snapshot.kinds import KINDS
from assay.snapshot.store_io import export_snapshot

Cli = Callable[..., int]


def _bundled_cve_lines() -> list[bytes]:
    [cves] = [path for path in bundled_files() if path.name.startswith("nvd-cves")]
    with gzip.open(cves, "rb") as handle:
        return [line.rstrip(b"\n") for line in handle if line.strip()]


def _write_lines(folder: Path, name: str, lines: list[bytes]) -> Path:
    path = folder / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _contents(store: Store) -> dict[str, list[bytes]]:
    """Every record of every kind, as the API serves them."""
    return {kind.name: sorted(kind.records(store, None)) for kind in KINDS}


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Store]:
    """A SQLite store of 200 real CVEs and the product dictionary sample."""
    store = open_store(f"sqlite:///{tmp_path / 'source.db'}")
    lines = _bundled_cve_lines()
    first = _write_lines(tmp_path, "first.jsonl", lines[:200])
    others = [path for path in bundled_files() if not path.name.startswith("nvd-cves")]
    report = Importer(store).import_files([first, *others])
    assert report.ok, report.problems
    try:
        yield store
    finally:
        store.close()


@pytest.fixture(params=backends())
def target_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / f"target-{request.param}"
    folder.mkdir()
    yield from make_store_url(request.param, folder)


@pytest.fixture
def keys(tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    prefix = tmp_path / "release"
    assert cli("keys", "generate", "--type", "ecdsa-p256", "--out", str(prefix)) == 0
    capsys.readouterr()
    return Path(f"{prefix}.key"), Path(f"{prefix}.pub")


def _export(
    cli: Cli, capsys: pytest.CaptureFixture[str], store: Store, out: Path, key: Path, *extra: str
) -> dict[str, object]:
    code = cli(
        "store",
        "export",
        "--store",
        store.url,
        "--out",
        str(out),
        "--key",
        str(key),
        "--json",
        *extra,
    )
    assert code == 0
    summary: dict[str, object] = json.loads(capsys.readouterr().out)
    return summary


def _import(cli: Cli, url: str, public: Path, *files: Path) -> int:
    return cli(
        "store", "import", "--store", url, "--create", "--key", str(public), *map(str, files)
    )


def test_a_full_snapshot_then_a_delta_make_an_exact_copy(  # noqa: PLR0917 - pytest fixtures
    source: Store,
    target_url: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, public = keys
    full = _export(cli, capsys, source, tmp_path / "full.snap", private)
    assert set(full) == {"generation", "since", "records", "bytes", "sha256"}
    assert full["since"] is None
    assert _import(cli, target_url, public, tmp_path / "full.snap") == 0
    target = open_store(target_url)
    try:
        assert _contents(target) == _contents(source)
        # The source moves on: 50 new CVEs and one changed record.
        lines = _bundled_cve_lines()
        changed = orjson.loads(lines[0])
        changed["lastModified"] = format_nvd_timestamp(datetime.now(UTC) - timedelta(minutes=1))
        changed["descriptions"][0]["value"] = "Changed after the full snapshot."
        more = _write_lines(tmp_path, "more.jsonl", [*lines[200:250], orjson.dumps(changed)])
        assert Importer(source).import_files([more]).ok
        delta = _export(
            cli,
            capsys,
            source,
            tmp_path / "delta.snap",
            private,
            "--since",
            str(full["generation"]),
        )
        assert delta["since"] == full["generation"]
        assert delta["records"] == 51
        assert _import(cli, target_url, public, tmp_path / "delta.snap") == 0
        assert _contents(target) == _contents(source)
        # The same delta again is an overlap, and refused without a change.
        before = _contents(target)
        assert _import(cli, target_url, public, tmp_path / "delta.snap") == 2
        err = capsys.readouterr().err
        assert "an overlap" in err
        assert f"after generation {full['generation']}" in err
        assert f"generation {delta['generation']} of its source" in err
        assert _contents(target) == before
    finally:
        target.close()


def test_a_gap_is_refused_naming_both_generations(  # noqa: PLR0917 - pytest fixtures
    source: Store,
    target_url: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, public = keys
    full = _export(cli, capsys, source, tmp_path / "full.snap", private)
    assert _import(cli, target_url, public, tmp_path / "full.snap") == 0
    base = int(str(full["generation"]))
    lines = _bundled_cve_lines()
    for step in range(2):
        batch = _write_lines(tmp_path, f"b{step}.jsonl", lines[200 + 10 * step : 210 + 10 * step])
        assert Importer(source).import_files([batch]).ok
    later = _export(cli, capsys, source, tmp_path / "later.snap", private, "--since", str(base + 1))
    assert _import(cli, target_url, public, tmp_path / "later.snap") == 2
    err = capsys.readouterr().err
    assert f"a gap: the delta starts after generation {base + 1}" in err
    assert f"this store is at generation {base} of its source" in err
    assert later["since"] == base + 1


def test_tampering_is_refused_before_the_store_is_touched(  # noqa: PLR0917 - pytest fixtures
    source: Store,
    target_url: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, public = keys
    snapshot = tmp_path / "full.snap"
    _export(cli, capsys, source, snapshot, private)
    data = bytearray(snapshot.read_bytes())
    data[len(data) // 2] ^= 0x01
    altered = tmp_path / "altered.snap"
    altered.write_bytes(bytes(data))
    code = cli(
        "store", "import", "--store", target_url, "--create", "--key", str(public),
        "--signature", str(snapshot) + ".intoto.json", str(altered),
    )  # fmt: skip
    assert code == 2
    assert "is not the signed subject's" in capsys.readouterr().err
    # Another key: refused as well, and the store was never created.
    other = tmp_path / "other"
    assert cli("keys", "generate", "--type", "ed25519", "--out", str(other)) == 0
    capsys.readouterr()
    assert _import(cli, target_url, Path(f"{other}.pub"), snapshot) == 2
    assert "does not verify" in capsys.readouterr().err
    from assay.nvd.storage import store_exists

    assert not store_exists(target_url)


def test_an_unsigned_altered_snapshot_fails_its_manifest_digests_and_writes_nothing(
    source: Store, target_url: str, tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    # One record made invalid in a snapshot rebuilt with consistent digests: the importer
    # refuses it, and the records read before it are not kept either.
    lines = list(KINDS[0].records(source, None))
    lines[150] = b'{"id": "CVE-bogus"}'
    writer = SnapshotWriter()
    writer.member("nvd/cve.jsonl", "cve", iter(lines))
    bad = tmp_path / "bad.snap"
    with bad.open("wb") as out:
        writer.write(out, store="s", since=None, generation=3, created="2026-01-01", cursors={})
    code = cli(
        "store", "import", "--store", target_url, "--create", "--insecure-unsigned", str(bad)
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--insecure-unsigned: no signature checked" in err
    assert "nothing was applied" in err
    store = open_store(target_url)
    try:
        assert store.count_cves() == 0
    finally:
        store.close()
    # A byte changed inside a member is caught by the manifest's digest.
    good = tmp_path / "good.snap"
    with good.open("wb") as out:
        export_snapshot(source, out)
    raw = bytearray(good.read_bytes())
    assert cli("store", "import", "--store", target_url, "--insecure-unsigned", str(good)) == 0
    capsys.readouterr()
    del raw[-40:]
    cut = tmp_path / "cut.snap"
    cut.write_bytes(bytes(raw))
    assert cli("store", "import", "--store", target_url, "--insecure-unsigned", str(cut)) == 2


def test_export_of_a_missing_store_is_refused(
    tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = f"sqlite:///{tmp_path / 'nope.db'}"
    assert cli("store", "export", "--store", missing, "--out", str(tmp_path / "x.snap")) == 2
    assert "no store there" in capsys.readouterr().err
    assert not (tmp_path / "x.snap").exists()


@given(
    document=st.recursive(
        st.none() | st.booleans() | st.integers(-5, 10**12) | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=5)
        ),
        max_leaves=20,
    ),
    base=st.sampled_from(
        [
            {},
            {
                "format": 1,
                "store": "s",
                "since": None,
                "generation": 1,
                "created": "c",
                "cursors": {},
                "members": [],
            },
        ]
    ),
)
def test_any_manifest_is_read_or_refused_with_a_snapshot_error(
    document: object, base: dict[str, object]
) -> None:
    candidate = {**base, **document} if isinstance(document, dict) else document
    try:
        Manifest.from_bytes(orjson.dumps(candidate), "x.snap")
    except SnapshotError as error:
        where = error.where
    else:
        where = "x.snap"
    assert where.startswith("x.snap")


def test_a_snapshot_reads_back_what_was_written() -> None:
    writer = SnapshotWriter()
    writer.member("nvd/cve.jsonl", "cve", iter([b'{"a":1}', b'{"b":2}']))
    out = io.BytesIO()
    manifest = writer.write(
        out, store="s", since=2, generation=4, created="c", cursors={"sync.cves": "x"}
    )
    from assay.snapshot.format import SnapshotReader

    out.seek(0)
    reader = SnapshotReader(out, "mem")
    assert reader.manifest == manifest
    [(info, stream)] = [(info, stream.read()) for info, stream in reader.members()]
    assert (info.records, stream) == (2, b'{"a":1}\n{"b":2}\n')
