"""Statements built from parts: valid for assay's strict validator and for in-toto's parser."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import ASSETS

from assay.attestation import ResourceDescriptor, has_errors, parse_statement, validate
from assay.errors import InputError
from assay.lockfiles import read_lockfile
from assay.provenance import (
    COMMAND_BUILD_TYPE,
    build_statement,
    lockfile_dependencies,
    parse_dependency,
    parse_external_parameters,
)

from .independent import check_with_in_toto

SHA256 = "a" * 64
SUBJECT = ResourceDescriptor(name="dist/widget.tar.gz", digest={"sha256": SHA256})
START = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.UTC)


def build(**overrides: object):  # type: ignore[no-untyped-def]
    parts: dict[str, object] = {
        "subjects": [SUBJECT],
        "builder_id": "https://ci.example/builders/release",
        "build_type": COMMAND_BUILD_TYPE,
        "external_parameters": {"command": ["make", "dist"]},
        "invocation_id": "urn:uuid:8f844317-3f47-4a65-96db-9819574e91bb",
        "started_on": START,
        "finished_on": START + dt.timedelta(minutes=3),
    }
    return build_statement(**(parts | overrides))  # type: ignore[arg-type]


def test_the_statement_has_every_part_in_place() -> None:
    statement = build(
        subjects=[SUBJECT, SUBJECT],
        resolved_dependencies=[parse_dependency(f"pkg:pypi/attrs@23.2.0@sha256:{SHA256}")],
        internal_parameters={"ci": "github-actions"},
    )
    assert statement.to_dict() == {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "dist/widget.tar.gz", "digest": {"sha256": SHA256}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": COMMAND_BUILD_TYPE,
                "externalParameters": {"command": ["make", "dist"]},
                "internalParameters": {"ci": "github-actions"},
                "resolvedDependencies": [
                    {"uri": "pkg:pypi/attrs@23.2.0", "digest": {"sha256": SHA256}}
                ],
            },
            "runDetails": {
                "builder": {"id": "https://ci.example/builders/release"},
                "metadata": {
                    "invocationId": "urn:uuid:8f844317-3f47-4a65-96db-9819574e91bb",
                    "startedOn": "2026-03-01T12:00:00Z",
                    "finishedOn": "2026-03-01T12:03:00Z",
                },
            },
        },
    }
    provenance = check_with_in_toto(statement.to_json())
    assert provenance.run_details.metadata.finished_on.ToJsonString() == "2026-03-01T12:03:00Z"


@pytest.mark.parametrize(
    ("overrides", "where", "fragment"),
    [
        ({"builder_id": "ci-builder"}, "--builder-id", "URI"),
        ({"build_type": "make"}, "--build-type", "URI"),
        ({"subjects": []}, "--subject", "at least one subject"),
        (
            {"finished_on": START - dt.timedelta(seconds=1)},
            "--finished-on",
            "at or after the start",
        ),
    ],
)
def test_invalid_parts_are_refused_naming_the_option(
    overrides: dict[str, object], where: str, fragment: str
) -> None:
    with pytest.raises(InputError) as caught:
        build(**overrides)
    assert caught.value.where == where
    assert fragment in caught.value.reason


def test_external_parameters_nest_on_dots() -> None:
    assert parse_external_parameters(
        ["workflow.ref=refs/heads/main", "workflow.path=a.yml", "x=1=2"]
    ) == {
        "workflow": {"ref": "refs/heads/main", "path": "a.yml"},
        "x": "1=2",
    }


@pytest.mark.parametrize(
    ("items", "fragment"),
    [
        (["novalue"], "KEY=VALUE"),
        (["=v"], "KEY=VALUE"),
        (["a..b=v"], "KEY=VALUE"),
        (["a=1", "a=2"], "each key once"),
        (["a=1", "a.b=2"], "to hold parameters"),
    ],
)
def test_bad_external_parameters(items: list[str], fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_external_parameters(items)
    assert caught.value.where == "--external-parameter"
    assert fragment in caught.value.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pkg:npm/%40actions/core@2.0.2", {"uri": "pkg:npm/%40actions/core@2.0.2"}),
        (
            f"git+https://github.com/acme/widget@refs/heads/main@gitCommit:{'b' * 40}",
            {
                "uri": "git+https://github.com/acme/widget@refs/heads/main",
                "digest": {"gitCommit": "b" * 40},
            },
        ),
        (
            f"https://example.org/x.tgz@sha256:{'A' * 64},sha512:{'c' * 128}",
            {
                "uri": "https://example.org/x.tgz",
                "digest": {"sha256": "a" * 64, "sha512": "c" * 128},
            },
        ),
    ],
)
def test_dependencies_named_by_hand(text: str, expected: dict[str, object]) -> None:
    assert parse_dependency(text).to_dict() == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("widget", "with a URI scheme"),
        (f"pkg:pypi/x@1@md4:{'a' * 32}", "digest algorithm"),
        ("pkg:pypi/x@1@sha256:abcd", "64 hex characters"),
    ],
)
def test_bad_dependencies(text: str, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_dependency(text)
    assert caught.value.where == "--dependency"
    assert fragment in caught.value.reason


@pytest.mark.parametrize(
    "relative",
    [
        "sigstore-python/requirements.txt",
        "hello-world-javascript-action/package-lock.json",
        "fastapi-mvc/uv.lock",
        "fastapi-mvc/foobar/poetry.lock",
    ],
)
def test_lock_file_dependencies_validate_everywhere(relative: str) -> None:
    data = (ASSETS / "lockfiles" / relative).read_bytes()
    lock = read_lockfile(data, relative)
    dependencies = lockfile_dependencies(lock, data)
    assert dependencies[0].name == relative
    assert [d.uri for d in dependencies[1:]] == [p.purl for p in lock.packages]
    for descriptor, package in zip(dependencies[1:], lock.packages, strict=True):
        if package.digests:
            assert descriptor.digest == package.digests
        else:
            listed = descriptor.annotations["distributions"]
            assert [d["digest"] for d in listed] == [f.digests for f in package.files]
    statement = build(resolved_dependencies=dependencies)
    assert not has_errors(validate(parse_statement(statement.to_json())), strict=True)
    check_with_in_toto(statement.to_json())


uris = st.builds(
    lambda host, path: f"https://{host}.example/{path}",
    st.from_regex(r"[a-z]{1,10}", fullmatch=True),
    st.from_regex(r"[a-z0-9/]{0,20}", fullmatch=True),
)
hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)
subjects = st.lists(
    st.builds(
        lambda name, digest: ResourceDescriptor(name=name, digest={"sha256": digest}),
        st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=20),
        hex64,
    ),
    min_size=1,
    max_size=5,
    unique_by=lambda descriptor: descriptor.name,
)
parameters = st.lists(
    st.from_regex(r"[a-z]{1,6}(\.[a-z]{1,6}){0,2}=[ -~]{0,12}", fullmatch=True), max_size=5
)
dependencies = st.lists(
    st.builds(lambda uri, digest: f"{uri}@sha256:{digest}", uris, hex64) | uris, max_size=5
)
moments = st.datetimes(
    min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2099, 1, 1), timezones=st.just(dt.UTC)
)


@settings(max_examples=40)
@given(subjects, uris, uris, parameters, dependencies, moments, st.integers(0, 10**6))
def test_any_statement_built_is_valid_for_both_parsers(  # noqa: PLR0917 - one per strategy
    subject: list[ResourceDescriptor],
    builder_id: str,
    build_type: str,
    pairs: list[str],
    named: list[str],
    started: dt.datetime,
    seconds: int,
) -> None:
    try:
        external = parse_external_parameters(pairs)
    except InputError:
        return  # conflicting keys are refused, tested above
    if not external:
        with pytest.raises(InputError, match="--external-parameter"):
            build(external_parameters=external)
        return
    statement = build(
        subjects=subject,
        builder_id=builder_id,
        build_type=build_type,
        external_parameters=external,
        resolved_dependencies=[parse_dependency(text) for text in named],
        started_on=started,
        finished_on=started + dt.timedelta(seconds=seconds),
    )
    payload = statement.to_json()
    assert not has_errors(validate(parse_statement(payload)), strict=True)
    provenance = check_with_in_toto(payload)
    assert provenance.run_details.builder.id == builder_id
    assert len(provenance.build_definition.resolved_dependencies) == len(
        {parse_dependency(text).to_json() for text in named}
    )


def test_file_subjects_digest_files(tmp_path: Path) -> None:
    from assay.provenance import file_subjects

    (tmp_path / "a.bin").write_bytes(b"abc")
    given = [str(tmp_path / "a.bin"), str(tmp_path / "." / "a.bin")]
    found = file_subjects(given, root=tmp_path)
    assert [s.digest for s in found] == [
        {"sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
    ]
    with pytest.raises(InputError) as caught:
        file_subjects([str(tmp_path)], root=tmp_path)
    assert "expected a file" in caught.value.reason
    # Outside the root (the working directory by default): refused unless allowed.
    with pytest.raises(InputError) as caught:
        file_subjects(given, root=tmp_path / "elsewhere")
    assert "outside the working directory" in caught.value.reason
    assert file_subjects(given, root=tmp_path / "elsewhere", allow_outside=True) == found
