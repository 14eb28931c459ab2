"""Properties: what a generated lock file pins is what is read back; nothing else escapes."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from assay.lockfiles import LockfileError, read_lockfile

names = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,8}([._-][A-Za-z0-9]{1,5}){0,2}", fullmatch=True)
versions = st.builds(
    lambda parts, post: ".".join(map(str, parts)) + (f".post{post}" if post is not None else ""),
    st.lists(st.integers(0, 40), min_size=1, max_size=4),
    st.none() | st.integers(0, 3),
)
digests = st.binary(min_size=32, max_size=32).map(bytes.hex)


@st.composite
def requirement_lines(draw: st.DrawFn) -> tuple[str, str, str, list[str]]:
    name = draw(names)
    version = draw(versions)
    hashes = draw(st.lists(digests, max_size=3, unique=True))
    marker = draw(st.sampled_from(["", " ; python_version >= '3.8'", "; sys_platform == 'linux'"]))
    extras = draw(st.sampled_from(["", "[socks]"]))
    continued = draw(st.booleans())
    separator = " \\\n    " if continued else " "
    line = f"{name}{extras}=={version}{marker}"
    for value in hashes:
        line += f"{separator}--hash=sha256:{value}"
    comment = draw(st.sampled_from(["", "  # pinned", "\n    # via something"]))
    return line + comment, name, version, hashes


@settings(max_examples=60)
@given(st.lists(requirement_lines(), max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_requirements_round_trip(
    lines: list[tuple[str, str, str, list[str]]], newline: str
) -> None:
    text = "# generated\n" + "\n".join(line for line, *_ in lines) + "\n"
    lock = read_lockfile(text.replace("\n", newline).encode(), "requirements.txt")
    assert [(p.name, p.version) for p in lock.packages] == [
        (canonicalize_name(name), version) for _, name, version, _ in lines
    ]
    for package, (_, _, _, hashes) in zip(lock.packages, lines, strict=True):
        assert [f.digests for f in package.files] == [{"sha256": h} for h in hashes]
        assert package.digests == ({"sha256": hashes[0]} if len(hashes) == 1 else {})
        assert package.purl.startswith("pkg:pypi/")


npm_names = st.from_regex(r"(@[a-z][a-z0-9-]{0,6}/)?[a-z][a-z0-9._-]{0,10}", fullmatch=True)


@settings(max_examples=60)
@given(
    st.dictionaries(
        npm_names,
        st.tuples(versions, st.binary(min_size=64, max_size=64), st.booleans()),
        max_size=8,
    ),
    st.sampled_from([2, 3]),
)
def test_package_lock_round_trip(
    packages: dict[str, tuple[str, bytes, bool]], version: int
) -> None:
    document = {
        "name": "project",
        "lockfileVersion": version,
        "packages": {
            "": {"name": "project"},
            **{
                f"node_modules/{name}": {
                    "version": pinned,
                    "resolved": f"https://registry.npmjs.org/{name}/-/x-{pinned}.tgz",
                    "integrity": "sha512-" + base64.b64encode(raw).decode(),
                    **({"dev": True} if dev else {}),
                }
                for name, (pinned, raw, dev) in packages.items()
            },
        },
    }
    lock = read_lockfile(json.dumps(document).encode(), "package-lock.json")
    assert [(p.name, p.version, p.digests, p.dev) for p in lock.packages] == [
        (name, pinned, {"sha512": raw.hex()}, dev) for name, (pinned, raw, dev) in packages.items()
    ]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=60)
@given(json_values, st.text(min_size=1, max_size=4), json_values, json_values)
def test_a_duplicate_key_anywhere_is_an_error_naming_it(
    body: object, key: str, first: object, second: object
) -> None:
    pair = json.dumps(key)
    duplicated = f"{{{pair}: {json.dumps(first)}, {pair}: {json.dumps(second)}}}"
    text = (
        f'{{"lockfileVersion": 3, "packages": {{}}, "extra": [{json.dumps(body)}, {duplicated}]}}'
    )
    with pytest.raises(LockfileError) as caught:
        read_lockfile(text.encode(), "package-lock.json")
    assert "duplicate key" in caught.value.reason
    assert caught.value.where.startswith("package-lock.json, $.extra[1]")


@settings(max_examples=150)
@given(
    st.binary(max_size=300) | st.text(max_size=300).map(str.encode),
    st.sampled_from(["requirements.txt", "package-lock.json", "poetry.lock", "uv.lock", "x"]),
)
def test_any_bytes_give_a_result_or_a_lockfile_error(data: bytes, filename: str) -> None:
    try:
        lock = read_lockfile(data, filename)
    except LockfileError as error:
        where = error.where
    else:
        assert all(p.version and p.purl for p in lock.packages)
        return
    assert where.startswith(filename)
