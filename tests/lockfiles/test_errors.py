"""Bad lock files: every error names the file and the line or JSON path, and says why."""

from __future__ import annotations

import pytest

from assay.errors import AssayError, InputError
from assay.lockfiles import MAX_JSON_DEPTH, LockfileError, read_lockfile

SHA = "2e16e504bb129ff515b37823b472750b36b6de07963bd74b307341ef5ad8bdc3"


def error_of(data: bytes | str, filename: str) -> LockfileError:
    raw = data.encode() if isinstance(data, str) else data
    with pytest.raises(LockfileError) as caught:
        read_lockfile(raw, filename)
    assert isinstance(caught.value, InputError)
    assert isinstance(caught.value, AssayError)
    return caught.value


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        (
            "a==1 ; python_version<'3' \\\n  --hash=sha256:abc\n",
            "requirements.txt, line 1",
            "64 hexadecimal",
        ),
        (f"a==1 --hash=crc32:{SHA}\n", "requirements.txt, line 1", "hash algorithm"),
        ("a==1 --frobnicate\n", "requirements.txt, line 1", "--hash"),
        ("--frobnicate x\n", "requirements.txt, line 1", "'--frobnicate'"),
        ("a===\n", "requirements.txt, line 1", "(name==version)"),
        ("a b c\n", "requirements.txt, line 1", "expected a requirement"),
        ("x" * 70000 + "==1\n", "requirements.txt, line 1", "at most"),
    ],
)
def test_requirements(text: str, where: str, fragment: str) -> None:
    error = error_of(text, "requirements.txt")
    assert error.where == where
    assert fragment in error.reason


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ('{"lockfileVersion": 1, "dependencies": {}}', "$.lockfileVersion", "found 1"),
        ('{"lockfileVersion": 3}', "$.packages", "expected an object, found null"),
        (
            '{"lockfileVersion": 3, "packages": {"node_modules/a": 5}}',
            '$.packages["node_modules/a"]',
            "found number",
        ),
        (
            '{"lockfileVersion": 3, "packages": {"node_modules/a": {}}}',
            '$.packages["node_modules/a"].version',
            "version",
        ),
        (
            '{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1", "integrity": "sha512-!!"}}}',
            '$.packages["node_modules/a"].integrity',
            "base64",
        ),
        (
            '{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1", "integrity": "sha512-AAAA"}}}',
            '$.packages["node_modules/a"].integrity',
            "64-byte",
        ),
        (
            '{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1", "version": "2"}}}',
            '$.packages["node_modules/a"].version',
            "duplicate key",
        ),
        (
            '{"lockfileVersion": 3, "lockfileVersion": 3, "packages": {}}',
            "$.lockfileVersion",
            "duplicate",
        ),
        ("[1, 2]", "$", "expected a JSON object, found array"),
        ("[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5), "$", "found array"),
        ('{"a":' * 100 + "1" + "}" * 100, "$", "nesting"),
        ('{"lockfileVersion": 3,\n "packages": {,}}', "line 2 column 15", "expected JSON"),
    ],
)
def test_package_lock(text: str, where: str, fragment: str) -> None:
    error = error_of(text, "package-lock.json")
    assert error.where.startswith("package-lock.json")
    assert where in error.where
    assert fragment in error.reason


def test_deep_json_is_refused_not_a_recursion_crash() -> None:
    error = error_of('{"a":' * 100_000 + "1" + "}" * 100_000, "package-lock.json")
    assert "nesting" in error.reason


@pytest.mark.parametrize(
    ("filename", "text", "where", "fragment"),
    [
        ("uv.lock", "version = 2\n", "uv.lock, version", "expected uv.lock version 1"),
        (
            "uv.lock",
            "version = 1\n[[package]]\nname = 'a'\nsource = { registry = 'x' }\n",
            "uv.lock, line 2 (package[0])",
            "version",
        ),
        (
            "uv.lock",
            "version = 1\n\n[[package]]\nname = 'a'\nversion = '1'\nsource = { registry = 'x' }\nsdist = { url = 'u', hash = 'sha256:zz' }\n",
            "uv.lock, line 3 (package[0].sdist.hash)",
            "hexadecimal",
        ),
        ("poetry.lock", "[[package]]\nname = 'a'\nname = 'b'\n", "poetry.lock", "expected TOML"),
        (
            "poetry.lock",
            "[[package]]\nname = 'a'\nversion = '1'\nfiles = [{file = 'a.whl'}]\n",
            "poetry.lock, line 1 (package[0].files[0])",
            "hash",
        ),
        ("poetry.lock", "package = 3\n", "poetry.lock, package", "[[package]]"),
    ],
)
def test_toml_locks(filename: str, text: str, where: str, fragment: str) -> None:
    error = error_of(text, filename)
    assert error.where == where
    assert fragment in error.reason


def test_size_limit_is_checked_before_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay import lockfiles

    monkeypatch.setattr(lockfiles, "MAX_LOCKFILE_BYTES", 10)
    error = error_of("a==1\nb==22\n", "requirements.txt")
    assert "expected at most 10 bytes, found 11" in error.reason


def test_invalid_utf8_names_the_line() -> None:
    error = error_of(b"a==1\nb==2\xff\n", "requirements.txt")
    assert error.where == "requirements.txt, line 2"
    assert "0xff" in error.reason


def test_skipped_entries_are_reported_not_dropped() -> None:
    lock = read_lockfile(
        b"-r base.txt\n-e git+https://github.com/a/b@1f2e#egg=b\n./local\n"
        b"c @ https://example.org/c-1.0.tar.gz\n--index-url https://pypi.org/simple\nd==1\n",
        "requirements.txt",
    )
    assert [p.name for p in lock.packages] == ["d"]
    assert [s.location for s in lock.skipped] == ["line 1", "line 2", "line 3", "line 4"]
    assert str(lock.skipped[0]) == "-r base.txt"


def test_a_private_npm_registry_is_kept_as_the_purl_repository_url() -> None:
    document = (
        '{"lockfileVersion": 3, "packages": {'
        '"node_modules/@acme/ui": {"version": "1.0.0", '
        '"resolved": "https://npm.acme.example:8443/@acme/ui/-/ui-1.0.0.tgz?token=s3cret"},'
        '"node_modules/left-pad": {"version": "1.3.0", '
        '"resolved": "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz"}}}'
    )
    lock = read_lockfile(document.encode(), "package-lock.json")
    assert [p.purl for p in lock.packages] == [
        "pkg:npm/%40acme/ui@1.0.0?repository_url=https://npm.acme.example:8443",
        "pkg:npm/left-pad@1.3.0",
    ]


def test_a_private_python_index_is_kept_without_credentials() -> None:
    text = (
        "version = 1\n\n[[package]]\nname = 'Acme_Lib'\nversion = '2.0'\n"
        "source = { registry = 'https://user:t0ken@pypi.acme.example/simple' }\n"
    )
    lock = read_lockfile(text.encode(), "uv.lock")
    assert lock.packages[0].name == "acme-lib"
    assert lock.packages[0].purl == (
        "pkg:pypi/acme-lib@2.0?repository_url=https://pypi.acme.example/simple"
    )


# An unpinned line used to abort the whole file while editable and -r lines were skipped with
# a note; now it is kept, so a scan lists it as unidentified instead of scanning nothing.
@pytest.mark.parametrize(
    ("line", "name", "specifier"),
    [
        ("requests>=2.0", "requests", ">=2.0"),
        ("Requests", "requests", ""),
        ("flask==2.*", "flask", "==2.*"),
    ],
)
def test_an_unpinned_requirement_is_kept_apart_not_an_error(
    line: str, name: str, specifier: str
) -> None:
    lock = read_lockfile(f"ok==1.0\n\n{line}\n".encode(), "requirements.txt")
    assert [p.name for p in lock.packages] == ["ok"]
    [unpinned] = lock.unpinned
    assert (unpinned.name, unpinned.specifier, unpinned.location) == (
        name,
        specifier,
        "line 3",
    )
    assert unpinned.purl == f"pkg:pypi/{unpinned.name}"
