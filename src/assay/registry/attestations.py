"""Where registries keep an image's attestations, read as Sigstore bundles.

- cosign's tag scheme: the manifest tagged `sha256-HEX.att` whose layers are DSSE
  envelopes (`application/vnd.dsse.envelope.v1+json`), each with the signing certificate
  and chain and the Rekor entry's promise in annotations (`dev.sigstore.cosign/...`).
  Each layer becomes the v0.1 bundle it amounts to (certificate chain, one log entry
  with its signed promise, the envelope), verified as any bundle is.
- Sigstore bundles attached as OCI artifacts, as `gh attestation verify
  --bundle-from-oci` reads them: referrers of the image (OCI 1.1 referrers API, or its
  `sha256-HEX` tag-schema fallback) whose artifact type is a Sigstore bundle; the bundle
  is the manifest's first layer.

What is fetched is returned with its digest and bytes, so it can be kept in the cache
and verified again offline.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from assay import protocol
from assay.errors import RegistryError
from assay.registry.client import MAX_BLOB_BYTES, Manifest
from assay.registry.reference import Reference


class ImageSource(Protocol):
    """What attestations are read from: a registry (`RegistryClient`, `CachingClient`) or
    a cache (`OfflineClient`)."""

    def manifest(self, ref: Reference, reference: str | None = None) -> Manifest: ...

    def find_manifest(self, ref: Reference, reference: str) -> Manifest | None: ...

    def blob(self, ref: Reference, digest: str, limit: int = MAX_BLOB_BYTES) -> bytes: ...

    def referrers(
        self, ref: Reference, digest: str, artifact_type: str | None = None
    ) -> list[dict[str, Any]]: ...


DSSE_LAYER: Final = protocol.DSSE_ENVELOPE_MEDIA_TYPE
COSIGN_BUNDLE: Final = "dev.sigstore.cosign/bundle"
COSIGN_CERTIFICATE: Final = "dev.sigstore.cosign/certificate"
COSIGN_CHAIN: Final = "dev.sigstore.cosign/chain"
BUNDLE_ARTIFACT_TYPE_PREFIX: Final = protocol.BUNDLE_PREFIX
"""`application/vnd.dev.sigstore.bundle.v0.3+json` (gh, cosign) and its older spellings."""
V01: Final = protocol.BUNDLE_V01


@dataclass(frozen=True, slots=True)
class Fetched:
    """One document as the registry served it: its digest, media type and bytes."""

    url: str
    digest: str
    media_type: str
    data: bytes = field(repr=False)


@dataclass(slots=True)
class ImageAttestations:
    reference: Reference
    digest: str
    bundles: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(label, bundle document): cosign layers made bundles, and attached bundles."""
    fetched: list[Fetched] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    """Which schemes found something: `cosign-att`, `referrers`."""
    attached: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """The bundles attached as OCI artifacts (referrers) alone, as gh's
    `--bundle-from-oci` reads them (they are in `bundles` too)."""
    key_signed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """cosign layers signed with a key (no certificate): (label, DSSE envelope). They
    are kept (and cached) for a policy with that key; Sigstore identities cannot
    vouch for them."""


def _certificate_chain(annotations: dict[str, Any], where: str) -> list[dict[str, str]]:
    """The signing certificate and its chain, from cosign's PEM annotations."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    try:
        certificates = x509.load_pem_x509_certificates(
            (annotations.get(COSIGN_CERTIFICATE, "") + "\n" + annotations.get(COSIGN_CHAIN, ""))
            .strip()
            .encode()
        )
    except ValueError:
        raise RegistryError(
            where, f"expected PEM certificates in {COSIGN_CERTIFICATE} and {COSIGN_CHAIN}"
        ) from None
    return [
        {"rawBytes": base64.b64encode(c.public_bytes(Encoding.DER)).decode()} for c in certificates
    ]


def _rekor_entry(annotations: dict[str, Any], where: str) -> dict[str, Any]:
    """The transparency log entry of cosign's bundle annotation (a Rekor promise)."""
    from assay.sigstore import load_json

    promise = load_json(annotations.get(COSIGN_BUNDLE) or "{}", f"{where}: {COSIGN_BUNDLE}")
    payload = promise.get("Payload") if isinstance(promise, dict) else None
    if not isinstance(payload, dict) or "SignedEntryTimestamp" not in promise:
        raise RegistryError(where, f"expected the Rekor promise in {COSIGN_BUNDLE}")
    try:
        body = json.loads(base64.b64decode(payload["body"]))
        kind = {"kind": body["kind"], "version": body["apiVersion"]}
        return {
            "logIndex": str(int(payload["logIndex"])),
            "logId": {"keyId": base64.b64encode(bytes.fromhex(payload["logID"])).decode()},
            "kindVersion": kind,
            "integratedTime": str(int(payload["integratedTime"])),
            "inclusionPromise": {"signedEntryTimestamp": promise["SignedEntryTimestamp"]},
            "canonicalizedBody": payload["body"],
        }
    except (KeyError, TypeError, ValueError):
        raise RegistryError(where, f"expected a Rekor entry in {COSIGN_BUNDLE}") from None


def cosign_bundle(layer: dict[str, Any], envelope: bytes, where: str) -> dict[str, Any]:
    """A cosign attestation layer as the v0.1 Sigstore bundle it amounts to."""
    from assay.sigstore import load_json

    annotations = layer.get("annotations")
    if not isinstance(annotations, dict):
        raise RegistryError(where, "expected the layer's cosign annotations")
    chain = _certificate_chain(annotations, where)
    entry = _rekor_entry(annotations, where)
    document = load_json(envelope, f"{where}: layer")
    return {
        "mediaType": V01,
        "verificationMaterial": {
            "x509CertificateChain": {"certificates": chain},
            "tlogEntries": [entry],
        },
        "dsseEnvelope": document,
    }


def _cosign_layer(
    client: ImageSource, found: ImageAttestations, layer: dict[str, Any], label: str
) -> None:
    """One layer of cosign's `.att` manifest: a key-signed envelope or a keyless bundle."""
    reference = found.reference
    data = client.blob(reference, layer["digest"])
    url = f"{reference.base_url}/blobs/{layer['digest']}"
    found.fetched.append(Fetched(url, layer["digest"], DSSE_LAYER, data))
    annotations = layer.get("annotations")
    if isinstance(annotations, dict) and not annotations.get(COSIGN_CERTIFICATE):
        from assay.sigstore import load_json

        envelope = load_json(data, label)
        if not isinstance(envelope, dict):
            raise RegistryError(url, "expected a DSSE envelope (a JSON object)")
        found.key_signed.append((label, envelope))
    else:
        found.bundles.append((label, cosign_bundle(layer, data, label)))


def _cosign_attestations(client: ImageSource, found: ImageAttestations) -> None:
    """What cosign attached under the `<digest>.att` tag."""
    reference, digest = found.reference, found.digest
    tag = digest.replace(":", "-") + ".att"
    manifest = client.find_manifest(reference, tag)
    if manifest is None:
        return
    _keep(found, reference, manifest)
    found.sources.append("cosign-att")
    for number, layer in enumerate(manifest.descriptors):
        if layer.get("mediaType") == DSSE_LAYER and isinstance(layer.get("digest"), str):
            label = f"{reference.with_digest(digest)} ({tag} layer {number})"
            _cosign_layer(client, found, layer, label)


def _referrer(client: ImageSource, found: ImageAttestations, descriptor: dict[str, Any]) -> None:
    """One Sigstore bundle the OCI referrers API lists for the image."""
    from assay.sigstore import load_json

    reference = found.reference
    artifact_type = descriptor.get("artifactType")
    if not str(artifact_type).startswith(BUNDLE_ARTIFACT_TYPE_PREFIX):
        return
    manifest = client.manifest(reference, str(descriptor.get("digest")))
    _keep(found, reference, manifest)
    layers = manifest.descriptors
    if not layers or not isinstance(layers[0].get("digest"), str):
        return
    data = client.blob(reference, layers[0]["digest"])
    url = f"{reference.base_url}/blobs/{layers[0]['digest']}"
    found.fetched.append(Fetched(url, layers[0]["digest"], str(artifact_type), data))
    label = f"{reference.with_digest(found.digest)} (referrer {manifest.digest})"
    document = load_json(data, label)
    if not isinstance(document, dict):
        raise RegistryError(url, "expected a Sigstore bundle (a JSON object)")
    found.bundles.append((label, document))
    found.attached.append((label, document))
    if "referrers" not in found.sources:
        found.sources.append("referrers")


def image_attestations(
    client: ImageSource, reference: Reference, *, digest: str | None = None
) -> ImageAttestations:
    """Every attestation the registry holds for the image (its digest: the reference's,
    else resolved from the tag; for a multi-platform image, the index's)."""
    if digest is None:
        digest = reference.digest or client.manifest(reference).digest
    found = ImageAttestations(reference, digest)
    _cosign_attestations(client, found)
    for descriptor in client.referrers(reference, digest):
        _referrer(client, found, descriptor)
    return found


def _keep(found: ImageAttestations, ref: Reference, manifest: Manifest) -> None:
    url = f"{ref.base_url}/manifests/{manifest.digest}"
    found.fetched.append(Fetched(url, manifest.digest, manifest.media_type, manifest.data))
