"""assay's registry client against the loopback registry, and a front that behaves as
Docker Hub, GHCR and Artifact Registry do (bearer-token challenge), fails and retries,
or alters what it serves. Each path ends in the command line's exit code and message."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.registry.conftest import ASSETS, push_layout
from tests.registry.proxy import Behaviour, front

from assay._cli import main
from assay.errors import RegistryError
from assay.registry.attestations import cosign_bundle, image_attestations
from assay.registry.client import OCI_INDEX, OCI_MANIFEST, RegistryClient, sha256_digest
from assay.registry.reference import Reference, parse_reference

pytestmark = pytest.mark.slow

LAYOUT = ASSETS / "slsa-verifier/gha_generic_container/v1.10.0/container_workflow_dispatch"
DIGEST = "sha256:e0a0a765d690a5104331cfbac88ebbbf01736c1f87aaa3cd455c516a5ea586a5"
ATT = "sha256-e0a0a765d690a5104331cfbac88ebbbf01736c1f87aaa3cd455c516a5ea586a5.att"
SOURCE = ["--source-uri", "github.com/slsa-framework/example-package"]
REPO = "client/image"


@pytest.fixture(scope="module")
def image(registry: str) -> Reference:
    ref = Reference(registry, REPO)
    push_layout(LAYOUT, ref)
    return ref


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def _config(tmp_path: Path, registry: str, **entry: Any) -> Path:
    path = tmp_path / "docker" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entry | {"auths": entry.get("auths", {})}))
    return path


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


@contextlib.contextmanager
def _docker_config(path: Path) -> Iterator[None]:
    before = os.environ.get("DOCKER_CONFIG")
    os.environ["DOCKER_CONFIG"] = str(path.parent)
    try:
        yield
    finally:
        if before is None:
            del os.environ["DOCKER_CONFIG"]
        else:
            os.environ["DOCKER_CONFIG"] = before


# the bearer-token challenge


def test_a_bearer_challenge_is_answered_with_the_docker_config_credentials(
    image: Reference, tmp_path: Path
) -> None:
    behaviour = Behaviour()
    with front(image.registry, behaviour) as host:
        config = _config(tmp_path, host, auths={host: {"auth": _basic("alice", "s3cret")}})
        with RegistryClient(docker_config=config) as client:
            manifest = client.manifest(Reference(host, REPO), ATT)
    assert manifest.media_type == OCI_MANIFEST
    assert behaviour.token_requests == [
        {"scope": f"repository:{REPO}:pull", "service": "test-registry"}
    ]


def test_a_credential_helper_gives_the_credentials(
    image: Reference, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helpers = tmp_path / "bin"
    helpers.mkdir()
    helper = helpers / "docker-credential-assaytest"
    helper.write_text(
        "#!/bin/sh\nread server\n"
        'printf \'{"ServerURL":"%s","Username":"alice","Secret":"s3cret"}\' "$server"\n'
    )
    helper.chmod(helper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{helpers}{os.pathsep}{os.environ['PATH']}")
    behaviour = Behaviour()
    with front(image.registry, behaviour) as host:
        config = _config(tmp_path, host, credHelpers={host: "assaytest"})
        with RegistryClient(docker_config=config) as client:
            assert client.manifest_exists(Reference(host, REPO), ATT)
    assert len(behaviour.token_requests) == 1


def test_verify_image_through_the_challenge(image: Reference, tmp_path: Path) -> None:
    behaviour = Behaviour()
    with front(image.registry, behaviour) as host:
        config = _config(tmp_path, host, auths={host: {"auth": _basic("alice", "s3cret")}})
        with _docker_config(config):
            code, _, err = run(
                ["verify-image", f"{host}/{REPO}@{DIGEST}", *SOURCE, "--cache-dir", str(tmp_path)]
            )
    assert code == 0, err
    assert "PASSED" in err


def test_wrong_credentials_exit_2_naming_the_token_url_never_the_secret(
    image: Reference, tmp_path: Path
) -> None:
    with front(image.registry, Behaviour()) as host:
        config = _config(tmp_path, host, auths={host: {"auth": _basic("alice", "wrong-pw")}})
        with _docker_config(config):
            code, _, err = run(
                ["verify-image", f"{host}/{REPO}@{DIGEST}", *SOURCE, "--cache-dir", str(tmp_path)]
            )
    assert code == 2
    assert f"http://{host}/token: token request answered 401" in err
    assert "wrong-pw" not in err
    assert "Traceback" not in err


def test_anonymous_access_to_a_registry_that_wants_a_login_exit_2(
    image: Reference, tmp_path: Path
) -> None:
    with front(image.registry, Behaviour()) as host, _docker_config(tmp_path / "no" / "c.json"):
        code, _, err = run(
            ["verify-image", f"{host}/{REPO}@{DIGEST}", *SOURCE, "--cache-dir", str(tmp_path)]
        )
    assert code == 2
    assert "token request answered 401 (check the credentials: docker login)" in err


# failures


def test_503_and_429_are_retried_with_backoff(image: Reference) -> None:
    delays: list[float] = []
    behaviour = Behaviour(require_token=False, failures=[503, 429, 502])
    with front(image.registry, behaviour) as host, RegistryClient(sleep=delays.append) as client:
        manifest = client.manifest(Reference(host, REPO), ATT)
    assert manifest.digest.startswith("sha256:")
    assert delays == [0.5, 0.0, 2.0]  # 0.5 * 2**0, the 429's Retry-After: 0, 0.5 * 2**2


def test_a_registry_that_keeps_failing_exit_2_naming_the_url(
    image: Reference, tmp_path: Path
) -> None:
    behaviour = Behaviour(require_token=False, failures=[503] * 20)
    with front(image.registry, behaviour) as host:
        code, _, err = run(
            [
                "verify-image",
                f"{host}/{REPO}@{DIGEST}",
                *SOURCE,
                "--cache-dir",
                str(tmp_path),
                "--timeout",
                "2",
            ]
        )
    assert code == 2
    assert f"http://{host}/v2/{REPO}/manifests/{ATT}: manifest: HTTP 503" in err


def test_an_unreachable_registry_exit_2_naming_the_url(tmp_path: Path) -> None:
    code, _, err = run(
        ["verify-image", f"127.0.0.1:9/{REPO}@{DIGEST}", *SOURCE, "--cache-dir", str(tmp_path)]
    )
    assert code == 2
    assert f"http://127.0.0.1:9/v2/{REPO}/manifests/{ATT}: cannot connect" in err


def test_an_altered_blob_is_refused_while_it_is_read(image: Reference) -> None:
    behaviour = Behaviour(require_token=False, alter_blobs=True)
    with (
        front(image.registry, behaviour) as host,
        RegistryClient() as client,
        pytest.raises(RegistryError) as refused,
    ):
        image_attestations(client, Reference(host, REPO, None, DIGEST))
    assert "does not have the digest sha256:" in str(refused.value)


def test_a_blob_over_the_limit_is_refused(image: Reference) -> None:
    with RegistryClient() as client:
        att = client.manifest(image, ATT)
        layer = att.descriptors[0]["digest"]
        with pytest.raises(RegistryError, match="expected at most 100 bytes"):
            client.blob(image, layer, limit=100)


# references


@pytest.mark.parametrize(
    ("text", "base"),
    [
        ("ghcr.io/acme/widget@sha256:" + "a" * 64, "https://ghcr.io/v2/acme/widget"),
        ("alpine", "https://registry-1.docker.io/v2/library/alpine"),
        ("docker.io/acme/w:1.2", "https://registry-1.docker.io/v2/acme/w"),
        ("localhost:5000/a/b", "http://localhost:5000/v2/a/b"),
        ("127.0.0.2:5000/a", "http://127.0.0.2:5000/v2/a"),
        ("[::1]:5000/a", "http://[::1]:5000/v2/a"),
        ("10.0.0.1:5000/a", "https://10.0.0.1:5000/v2/a"),
    ],
)
def test_plain_http_only_for_loopback(text: str, base: str) -> None:
    assert parse_reference(text).base_url == base


@pytest.mark.parametrize(
    "text",
    ["ghcr.io/Acme/w", "ghcr.io/a/w@sha256:abc", "ghcr.io/a/w:bad tag", "ghcr.io/a/w@md5:00"],
)
def test_a_malformed_reference_exit_2_naming_the_argument(text: str, tmp_path: Path) -> None:
    code, _, err = run(["verify-image", text, *SOURCE, "--cache-dir", str(tmp_path)])
    assert code == 2
    assert "IMAGE: expected" in err


def test_a_tag_reference_is_refused(tmp_path: Path) -> None:
    code, _, err = run(
        ["verify-image", "ghcr.io/a/w:latest", *SOURCE, "--cache-dir", str(tmp_path)]
    )
    assert code == 2
    assert "expected an immutable reference IMAGE@sha256:HEX" in err


# referrers, attached bundles, offline


def _attach_bundle(ref: Reference, client: RegistryClient) -> str:
    """The cosign attestation as a Sigstore bundle attached to the image: an OCI artifact
    manifest, listed (the registry has no referrers API) by the tag-schema index."""
    att = json.loads((LAYOUT / "blobs/sha256" / ATT_MANIFEST).read_text())
    layer = att["layers"][0]
    envelope = (LAYOUT / "blobs/sha256" / layer["digest"].split(":")[1]).read_bytes()
    bundle = json.dumps(cosign_bundle(layer, envelope, "layer")).encode()
    bundle_type = "application/vnd.dev.sigstore.bundle+json;version=0.1"
    empty = client.push_blob(ref, b"{}")
    layer_digest = client.push_blob(ref, bundle)
    artifact = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "artifactType": bundle_type,
            "config": {
                "mediaType": "application/vnd.oci.empty.v1+json",
                "digest": empty,
                "size": 2,
            },
            "layers": [{"mediaType": bundle_type, "digest": layer_digest, "size": len(bundle)}],
            "subject": {"mediaType": OCI_INDEX, "digest": DIGEST, "size": 856},
        }
    ).encode()
    artifact_digest = client.push_manifest(ref, sha256_digest(artifact), artifact, OCI_MANIFEST)
    index = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {
                    "mediaType": OCI_MANIFEST,
                    "digest": artifact_digest,
                    "size": len(artifact),
                    "artifactType": bundle_type,
                }
            ],
        }
    ).encode()
    client.push_manifest(ref, DIGEST.replace(":", "-"), index, OCI_INDEX)
    return artifact_digest


ATT_MANIFEST = "31cc4fb663c8d34e2e6a0bd5f183d576c2811ee286e0998b4c2965e3b35a0d86"


def test_a_bundle_attached_as_a_referrer_is_found_through_the_tag_schema(
    registry: str, tmp_path: Path
) -> None:
    ref = Reference(registry, "client/referrers")
    blobs = LAYOUT / "blobs/sha256"
    with RegistryClient() as client:
        for path in blobs.iterdir():
            client.push_blob(ref, path.read_bytes())
        artifact = _attach_bundle(ref, client)
        assert [d["digest"] for d in client.referrers(ref, DIGEST)] == [artifact]
    code, out, err = run(
        ["verify-image", f"{ref}@{DIGEST}", *SOURCE, "--cache-dir", str(tmp_path), "--json"]
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["attestationSources"] == ["referrers"]


def test_verify_image_json_shape(image: Reference, tmp_path: Path) -> None:
    code, out, err = run(
        ["verify-image", f"{image}@{DIGEST}", *SOURCE, "--cache-dir", str(tmp_path), "--json"]
    )
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {
        "passed",
        "image",
        "digest",
        "attestationSources",
        "keySignedAttestations",
        "reason",
        "fetched",
        "verification",
    }
    assert report["reason"] is None
    assert report["keySignedAttestations"] == 0
    assert report["passed"] is True
    assert report["image"] == f"{image}@{DIGEST}"
    assert report["digest"] == DIGEST
    assert report["attestationSources"] == ["cosign-att"]
    assert {f["digest"] for f in report["fetched"]} >= {f"sha256:{ATT_MANIFEST}"}
    assert set(report["fetched"][0]) == {"url", "digest", "mediaType"}
    envelope = report["verification"]["envelopes"][0]
    assert envelope["passed"] is True
    assert envelope["signature"]["transparencyLog"]["proof"] == "inclusion-promise"


def test_fetch_then_verify_from_the_directory(image: Reference, tmp_path: Path) -> None:
    out = tmp_path / "evidence"
    code, printed, err = run(["fetch", f"{image}@{DIGEST}", "--out", str(out)])
    assert code == 0, err
    assert f"{image}@{DIGEST}\t" in printed
    assert any((out / "blobs" / "sha256").iterdir())
    code, _, err = run(
        ["verify-image", f"{image}@{DIGEST}", *SOURCE, "--attestation-dir", str(out)]
    )
    assert code == 0, err
    moved = f"127.0.0.1:9/{REPO}@{DIGEST}"  # nothing answers there: only the directory
    code, _, err = run(["verify-image", moved, *SOURCE, "--attestation-dir", str(out)])
    assert code == 2  # the directory holds the evidence of the other registry only
    assert "offline:" in err


def test_offline_with_an_empty_cache_exit_2(image: Reference, tmp_path: Path) -> None:
    code, _, err = run(
        ["verify-image", f"{image}@{DIGEST}", *SOURCE, "--offline", "--cache-dir", str(tmp_path)]
    )
    assert code == 2
    assert "offline: whether" in err
    assert "is not in the cache" in err


def test_an_altered_cache_is_an_error_not_a_verdict(image: Reference, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    argv = ["verify-image", f"{image}@{DIGEST}", *SOURCE, "--cache-dir", str(cache)]
    assert run(argv)[0] == 0
    layer = json.loads((LAYOUT / "blobs/sha256" / ATT_MANIFEST).read_text())["layers"][0]
    path = cache / "blobs" / "sha256" / layer["digest"].split(":")[1]
    path.write_bytes(path.read_bytes().replace(b"payload", b"paylaod"))
    code, _, err = run([*argv, "--offline"])
    assert code == 2
    assert "does not have the digest" in err


def _key_signed_attestation(ref: Reference, client: RegistryClient, subject: str) -> None:
    """A cosign-layout attestation signed with an ECDSA key (cosign attest --key, no
    transparency log), built and pushed here."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    from assay.dsse import pae

    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": str(ref), "digest": {"sha256": subject.split(":")[1]}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {"buildDefinition": {"buildType": "https://example.com/b"}},
    }
    payload = json.dumps(statement).encode()
    key = ec.generate_private_key(ec.SECP256R1())
    signature = key.sign(pae("application/vnd.in-toto+json", payload), ec.ECDSA(hashes.SHA256()))
    envelope = json.dumps(
        {
            "payloadType": "application/vnd.in-toto+json",
            "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": "", "sig": base64.b64encode(signature).decode()}],
        }
    ).encode()
    config = client.push_blob(ref, b"{}")
    layer = client.push_blob(ref, envelope)
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config,
                "size": 2,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.dsse.envelope.v1+json",
                    "digest": layer,
                    "size": len(envelope),
                    "annotations": {
                        "dev.cosignproject.cosign/signature": "",
                        "predicateType": "https://slsa.dev/provenance/v1",
                    },
                }
            ],
        }
    ).encode()
    client.push_manifest(ref, subject.replace(":", "-") + ".att", manifest, OCI_MANIFEST)


def test_a_key_signed_cosign_attestation_is_found_and_refused_as_unvouched(
    registry: str, tmp_path: Path
) -> None:
    ref = Reference(registry, "client/key-signed")
    subject = "sha256:" + "ab" * 32
    with RegistryClient() as client:
        _key_signed_attestation(ref, client, subject)
        found = image_attestations(client, ref.with_digest(subject))
    assert len(found.key_signed) == 1
    assert found.bundles == []
    code, out, err = run(
        ["verify-image", f"{ref}@{subject}", *SOURCE, "--cache-dir", str(tmp_path), "--json"]
    )
    assert code == 1
    assert "signed with a key, not a Fulcio certificate" in err
    assert json.loads(out)["keySignedAttestations"] == 1


def test_an_image_without_attestations_fails(image: Reference, tmp_path: Path) -> None:
    other = "sha256:" + "cd" * 32
    code, _, err = run(["verify-image", f"{image}@{other}", *SOURCE, "--cache-dir", str(tmp_path)])
    assert code == 1
    assert "no attestation found (looked for the cosign tag sha256-cdcd" in err


def test_a_blob_redirected_to_storage_is_followed_without_the_token(
    image: Reference, tmp_path: Path
) -> None:
    from tests.registry.recorded import Answer, Recorded, serve

    blobs = LAYOUT / "blobs" / "sha256"
    storage = Recorded(
        {f"/v2/{REPO}/blobs/sha256:{p.name}": Answer(p.read_bytes()) for p in blobs.iterdir()}
    )
    with serve(storage) as stored:
        behaviour = Behaviour(redirect_blobs=stored.url.replace("127.0.0.1", "localhost"))
        with front(image.registry, behaviour) as host:
            config = _config(tmp_path, host, auths={host: {"auth": _basic("alice", "s3cret")}})
            with _docker_config(config):
                code, _, err = run(
                    [
                        "verify-image",
                        f"{host}/{REPO}@{DIGEST}",
                        *SOURCE,
                        "--cache-dir",
                        str(tmp_path),
                    ]
                )
    assert code == 0, err
    assert len(stored.requests) == 1
    assert "Authorization" not in stored.requests[0][1]


def _attach(ref: Reference, client: RegistryClient, subject: str, bundle: bytes) -> None:
    """`bundle` attached to `subject` as gh and cosign attach v0.3 bundles: an OCI
    artifact manifest, listed by the tag-schema index (the registry has no referrers
    API)."""
    bundle_type = "application/vnd.dev.sigstore.bundle.v0.3+json"
    empty = client.push_blob(ref, b"{}")
    layer = client.push_blob(ref, bundle)
    artifact = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "artifactType": bundle_type,
            "config": {
                "mediaType": "application/vnd.oci.empty.v1+json",
                "digest": empty,
                "size": 2,
            },
            "layers": [{"mediaType": bundle_type, "digest": layer, "size": len(bundle)}],
            "subject": {"mediaType": OCI_MANIFEST, "digest": subject, "size": 1},
        }
    ).encode()
    digest = client.push_manifest(ref, sha256_digest(artifact), artifact, OCI_MANIFEST)
    descriptor = {
        "mediaType": OCI_MANIFEST,
        "digest": digest,
        "size": len(artifact),
        "artifactType": bundle_type,
    }
    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [descriptor]})
    client.push_manifest(ref, subject.replace(":", "-"), index.encode(), OCI_INDEX)


def test_verify_bundle_from_oci_reads_the_attached_bundles(registry: str, tmp_path: Path) -> None:
    """gh's `attestation verify oci://IMAGE --bundle-from-oci`: a real GitHub bundle (its
    subject digest stands for the image's) attached to that digest in the registry."""
    bundle = (ASSETS / "github" / "reusable-workflow-attestation.sigstore.json").read_bytes()
    subject = "sha256:49a3aa6075e0f49f82843e74b5baa614ad2a588e6675612bf108a0a008c5ac25"
    ref = Reference(registry, "client/oci-bundles")
    with RegistryClient() as client:
        _attach(ref, client, subject, bundle)
    argv = ["verify-bundle", f"oci://{ref}@{subject}", "--bundle-from-oci"]
    argv += ["--repo", "malancas/attest-demo", "--cache-dir", str(tmp_path)]
    workflow = "github/artifact-attestations-workflows/.github/workflows/attest.yml"
    code, _out, err = run([*argv, "--signer-workflow", workflow])
    assert code == 0, err
    assert f"Loaded 1 attestation(s) from oci://{ref}@{subject}" in err
    code, _, err = run([*argv, "--signer-workflow", workflow, "--offline"])
    assert code == 0, err
    code, _, err = run([*argv, "--signer-workflow", "acme/other/.github/workflows/x.yml"])
    assert code == 1
    code, _, err = run(
        ["verify-bundle", f"sha256:{subject.split(':')[1]}", "--bundle-from-oci", "--owner", "x"]
    )
    assert code == 2
    assert "--bundle-from-oci: expected an oci://IMAGE@sha256:HEX artifact" in err


@pytest.mark.parametrize(
    ("annotations", "reason"),
    [
        (
            {"dev.sigstore.cosign/certificate": "not a certificate"},
            "expected PEM certificates in dev.sigstore.cosign/certificate",
        ),
        ("CERT", "expected the Rekor promise in dev.sigstore.cosign/bundle"),
    ],
)
def test_a_malformed_cosign_layer_exit_2_naming_it(
    registry: str, tmp_path: Path, annotations: Any, reason: str
) -> None:
    real = json.loads((LAYOUT / "blobs/sha256" / ATT_MANIFEST).read_text())
    layer = real["layers"][0]
    if annotations == "CERT":  # the real certificate, the promise left out
        annotations = {
            k: v for k, v in layer["annotations"].items() if k != "dev.sigstore.cosign/bundle"
        }
    ref = Reference(registry, "client/malformed")
    subject = "sha256:" + "ef" * 32
    with RegistryClient() as client:
        envelope = (LAYOUT / "blobs/sha256" / layer["digest"].split(":")[1]).read_bytes()
        config = client.push_blob(ref, b"{}")
        digest = client.push_blob(ref, envelope)
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config,
                "size": 2,
            },
            "layers": [{**layer, "digest": digest, "annotations": annotations}],
        }
        tag = subject.replace(":", "-") + ".att"
        client.push_manifest(ref, tag, json.dumps(manifest).encode(), OCI_MANIFEST)
    code, _, err = run(["verify-image", f"{ref}@{subject}", *SOURCE, "--cache-dir", str(tmp_path)])
    assert code == 2
    assert reason in err
    assert f"{ref}@{subject} ({tag} layer 0)" in err
    assert "Traceback" not in err


def test_a_creds_store_and_an_identity_token_are_read_as_docker_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.registry.auth import credentials_for

    helpers = tmp_path / "bin"
    helpers.mkdir()
    helper = helpers / "docker-credential-store"
    helper.write_text(
        "#!/bin/sh\nread server\n"
        'if [ "$server" = "ghcr.io" ]; then printf \'{"Username":"<token>","Secret":"rt"}\';'
        ' else echo "credentials not found in native keychain"; exit 1; fi\n'
    )
    helper.chmod(helper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{helpers}{os.pathsep}{os.environ['PATH']}")
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "credsStore": "store",
                "auths": {"https://index.docker.io/v1/": {"auth": _basic("hub", "pw")}},
            }
        )
    )
    token = credentials_for("ghcr.io", config)
    assert token is not None
    assert (token.username, token.password, token.identity_token) == (None, None, "rt")
    hub = credentials_for("registry-1.docker.io", config)
    assert hub is not None
    assert (hub.username, hub.password) == ("hub", "pw")
    assert credentials_for("quay.io", config) is None  # the store has none: anonymous
    assert "pw" not in repr(hub)
