"""Real lock files from public projects (tests/assets/lockfiles/SOURCES.md), read whole."""

from __future__ import annotations

import hashlib
import re
import tomllib

import orjson
import pytest
from packageurl import PackageURL
from tests.conftest import ASSETS

from assay.lockfiles import read_lockfile

LOCKS = ASSETS / "lockfiles"


def read(relative: str, name: str | None = None):  # type: ignore[no-untyped-def]
    path = LOCKS / relative
    return read_lockfile(path.read_bytes(), name or path.name)


def test_pip_compile_output_with_several_hashes_per_pin() -> None:
    lock = read("sigstore-python/requirements.txt")
    assert lock.format == "requirements"
    text = (LOCKS / "sigstore-python/requirements.txt").read_text()
    pins = re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", text, re.MULTILINE)
    assert [(p.name, p.version) for p in lock.packages] == [
        (n.lower().replace("_", "-").replace(".", "-"), v) for n, v in pins
    ]
    hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", text)
    assert sum(len(p.files) for p in lock.packages) == len(hashes)
    cryptography = next(p for p in lock.packages if p.name == "cryptography")
    assert cryptography.purl == f"pkg:pypi/cryptography@{cryptography.version}"
    # Several files, so no single digest can be claimed for the package.
    assert len(cryptography.files) > 1
    assert cryptography.digests == {}
    assert cryptography.location.startswith("line ")


def test_hand_kept_requirements_with_comments() -> None:
    lock = read("slsa-github-generator/requirements.txt")
    assert [(p.name, p.version) for p in lock.packages] == [
        ("yamllint", "1.35.1"),
        ("pathspec", "0.12.1"),
    ]
    assert lock.packages[0].files[0].digests == {
        "sha256": "2e16e504bb129ff515b37823b472750b36b6de07963bd74b307341ef5ad8bdc3"
    }
    assert lock.packages[0].location == "line 3"
    assert lock.packages[1].location == "line 8"


def test_pip_freeze_lists_the_editable_install_as_skipped() -> None:
    lock = read("pip-freeze.txt")
    text = (LOCKS / "pip-freeze.txt").read_text()
    assert len(lock.packages) == len(re.findall(r"^\S+==\S+$", text, re.MULTILINE))
    assert [s.text for s in lock.skipped] == ["-e /home/dev/src/assay"]
    assert "editable" in lock.skipped[0].reason
    names = {p.name for p in lock.packages}
    assert {"packaging", "hypothesis", "cryptography"} <= names


def test_package_lock_v2_integrity_becomes_hex_digests() -> None:
    path = LOCKS / "hello-world-javascript-action/package-lock.json"
    lock = read("hello-world-javascript-action/package-lock.json")
    document = orjson.loads(path.read_bytes())
    entries = {k: v for k, v in document["packages"].items() if k}
    assert len(lock.packages) == len(entries)
    for package in lock.packages:
        key = package.location.removeprefix('$.packages["').removesuffix('"]')
        entry = entries[key]
        algorithm, encoded = entry["integrity"].split("-", 1)
        import base64

        assert package.digests == {algorithm: base64.b64decode(encoded).hex()}
        assert package.version == entry["version"]
        assert package.dev is bool(entry.get("dev"))
        assert package.files[0].url == entry["resolved"]
        purl = PackageURL.from_string(package.purl)
        assert purl.type == "npm"
        assert (f"{purl.namespace}/{purl.name}" if purl.namespace else purl.name) == package.name
    scoped = next(p for p in lock.packages if p.name == "@actions/core")
    assert scoped.purl.startswith("pkg:npm/%40actions/core@")
    assert [s.reason for s in lock.skipped] == ["the project itself"]


def test_package_lock_v3_without_integrity_and_with_a_file_dependency() -> None:
    lock = read("slsa-github-generator/compute-sha256/package-lock.json")
    assert lock.format == "package-lock"
    word_wrap = lock.packages[0]
    assert (word_wrap.name, word_wrap.version, word_wrap.dev) == (
        "@aashutoshrathi/word-wrap",
        "1.2.6",
        True,
    )
    assert word_wrap.digests == {}
    skipped = {s.location: s.reason for s in lock.skipped}
    assert skipped['$.packages["node_modules/tscommon"]'].startswith("not a registry release")
    assert len(lock.packages) + len(lock.skipped) == len(
        orjson.loads(
            (LOCKS / "slsa-github-generator/compute-sha256/package-lock.json").read_bytes()
        )["packages"]
    )


def test_poetry_lock_files_keep_their_names_and_hashes() -> None:
    path = LOCKS / "fastapi-mvc/foobar/poetry.lock"
    lock = read("fastapi-mvc/foobar/poetry.lock")
    document = tomllib.loads(path.read_text())
    assert [(p.name, p.version) for p in lock.packages] == [
        (e["name"], e["version"]) for e in document["package"]
    ]
    jinja = next(p for p in lock.packages if p.name == "jinja2")
    assert jinja.purl == "pkg:pypi/jinja2@3.1.2"
    assert {f.name for f in jinja.files} == {"Jinja2-3.1.2-py3-none-any.whl", "Jinja2-3.1.2.tar.gz"}
    assert lock.packages[1].location == "line 9 (package[1])"


def test_uv_lock_registry_packages_and_the_editable_project() -> None:
    path = LOCKS / "fastapi-mvc/uv.lock"
    lock = read("fastapi-mvc/uv.lock")
    document = tomllib.loads(path.read_text())
    registry = [e for e in document["package"] if "registry" in e["source"]]
    assert [(p.name, p.version) for p in lock.packages] == [
        (e["name"], e["version"]) for e in registry
    ]
    assert [s.text for s in lock.skipped] == ["fastapi-mvc 0.28.1"]
    for package, entry in zip(lock.packages, registry, strict=True):
        listed = ([entry["sdist"]] if "sdist" in entry else []) + entry.get("wheels", [])
        assert [f.url for f in package.files] == [item["url"] for item in listed]
        assert [f"sha256:{f.digests['sha256']}" for f in package.files] == [
            item["hash"] for item in listed
        ]


@pytest.mark.parametrize(
    ("relative", "name"),
    [
        ("fastapi-mvc/uv.lock", "locked"),
        ("fastapi-mvc/foobar/poetry.lock", "deps.lock"),
        ("hello-world-javascript-action/package-lock.json", "lock"),
        ("pip-freeze.txt", "frozen"),
    ],
)
def test_format_recognised_from_content_under_another_name(relative: str, name: str) -> None:
    assert read(relative, name).packages == read(relative).packages


def test_reading_is_deterministic_and_digests_are_hex() -> None:
    for path in LOCKS.rglob("*"):
        if path.name == "SOURCES.md" or not path.is_file():
            continue
        lock = read_lockfile(path.read_bytes(), path.name)
        assert lock == read_lockfile(path.read_bytes(), path.name)
        for package in lock.packages:
            for file in (package, *package.files):
                for algorithm, value in file.digests.items():
                    assert len(value) == len(hashlib.new(algorithm).hexdigest())
                    assert value == value.lower()
