"""What the verifier is given: attestations as read from files, and artifacts.

Plain data only. An `Attestation` is one DSSE envelope plus what the file said about it
outside the signature: where it came from (`container`), Google Cloud Build's unsigned
metadata (`gcb`), the Sigstore material it came with (`sigstore`: the bundle, or the
legacy envelope carrying its certificate), and, once the `Verifier` has verified that
material, the certificate identity that signed it (`identity`) or, for a bundle signed
with a key, the signatures its verified transparency-log entry records (`logged`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from assay import dsse
from assay.sigstore.identity import CertificateIdentity
from assay.sigstore.keyed import LoggedSignatures, is_key_signed

__all__ = ["Artifact", "Attestation", "CertificateIdentity", "Container", "GcbMetadata"]

Container = Literal["dsse", "jsonl", "sigstore-bundle", "gcloud", "npm"]


@dataclass(frozen=True, slots=True)
class GcbMetadata:
    """The unsigned metadata `gcloud … describe --show-provenance` prints beside an envelope.

    It must agree with the signed statement (as slsa-verifier requires), or the output
    was tampered with.
    """

    kind: str | None
    resource_uri: str | None
    image_digest: str | None
    fully_qualified_digest: str | None
    text: Mapping[str, Any] | None
    """The statement printed as text beside the envelope (the "text provenance")."""


@dataclass(frozen=True, slots=True)
class Attestation:
    """One envelope to evaluate; `name` and `digest` identify the file it came from."""

    name: str
    envelope: dsse.Envelope
    digest: dict[str, str] = field(default_factory=dict)
    container: Container = "dsse"
    """The form the envelope was read from."""
    gcb: GcbMetadata | None = None
    sigstore: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The Sigstore bundle the envelope came in, or the envelope itself when a signature
    carries a Fulcio certificate (slsa-github-generator's `.intoto.jsonl`), as read:
    nothing in it is trusted until the `Verifier` has verified it."""
    identity: CertificateIdentity | None = None
    """The certificate identity that signed the envelope. Set by the `Verifier` after
    verifying `sigstore`; a value given by a caller is not trusted (it is replaced)."""
    logged: LoggedSignatures | None = None
    """For a Sigstore bundle signed with a key: the signatures, and the keys that made
    them, that its transparency-log entry records. Set by the `Verifier` after verifying
    that entry; a value given by a caller is not trusted (it is replaced)."""

    @property
    def key_signed_bundle(self) -> bool:
        """Read from a Sigstore bundle whose verification material is a public key: a
        key signer counts for it only through its verified log entry (`logged`)."""
        return self.sigstore is not None and is_key_signed(self.sigstore)

    @property
    def file(self) -> str:
        """The file the attestation came from (its name without a `#N` record suffix)."""
        return self.name.split("#", 1)[0]


@dataclass(frozen=True, slots=True)
class Artifact:
    """An artifact to verify: a name for reports and the digests it was computed to have."""

    name: str
    digest: dict[str, str]
