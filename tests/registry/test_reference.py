"""Image references and registry challenges: properties over generated inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InputError
from assay.registry.auth import parse_challenge
from assay.registry.reference import Reference, is_loopback, parse_reference

_COMPONENT = st.from_regex(r"[a-z0-9]+([._-][a-z0-9]+)?", fullmatch=True)
_REGISTRY = st.sampled_from(
    ["ghcr.io", "localhost:5000", "127.0.0.1:5000", "quay.io", "[::1]:5000"]
)


@given(
    _REGISTRY,
    st.lists(_COMPONENT, min_size=1, max_size=3),
    st.none() | st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True),
    st.none() | st.from_regex(r"[0-9a-f]{64}", fullmatch=True),
)
def test_a_reference_reads_back_as_itself(
    registry: str, parts: list[str], tag: str | None, digest: str | None
) -> None:
    reference = Reference(registry, "/".join(parts), tag, f"sha256:{digest}" if digest else None)
    assert parse_reference(str(reference)) == reference
    scheme = "http" if is_loopback(registry) else "https"
    assert reference.base_url.startswith(f"{scheme}://{registry}/v2/")


@given(st.text(max_size=80))
def test_any_text_is_a_reference_or_an_input_error(text: str) -> None:
    try:
        parse_reference(text)
    except InputError as error:
        message = str(error)
    else:
        return
    assert message.startswith("IMAGE: expected")


@pytest.mark.parametrize(
    ("header", "scheme", "params"),
    [
        (
            'Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull"',
            "bearer",
            {
                "realm": "https://ghcr.io/token",
                "service": "ghcr.io",
                "scope": "repository:a/b:pull",
            },
        ),
        ('Basic realm="Registry Realm"', "basic", {"realm": "Registry Realm"}),
        (
            'Bearer realm="https://auth.docker.io/token",service="registry.docker.io"',
            "bearer",
            {"realm": "https://auth.docker.io/token", "service": "registry.docker.io"},
        ),
    ],
)
def test_challenges_of_real_registries(header: str, scheme: str, params: dict[str, str]) -> None:
    challenge = parse_challenge(header)
    assert challenge is not None
    assert challenge.scheme == scheme
    assert challenge.params == params
