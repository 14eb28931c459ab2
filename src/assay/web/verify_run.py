"""What `/verify` computes: validation findings and the `Verifier`'s report, from bytes.

The same readers and library objects as the command line: `read_documents` and its
validator (`assay attest validate`), `parse_policy` / `load_policy("builtin:NAME")`,
`read_attestations` and `assay.verify.Verifier` (`assay verify`), whose typed report is
the verdict. Two things differ because the input comes from a browser, not a file
system: a posted policy must carry its keys inline (PEM), since key paths would name
files on the server; and Sigstore bundles are verified offline with the trusted roots
shipped with assay, so that the certificate identity a policy names can be matched.
A policy's `vulnerabilities:` rule is evaluated against the served store.

Loaded only when `/verify` is first posted to: it imports the verification half.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.errors import AttestationError, InputError

if TYPE_CHECKING:
    from assay.attestation.documents import Document
    from assay.nvd.storage import Store
    from assay.policy.model import Policy
    from assay.verify.model import Attestation
    from assay.verify.verifier import VerificationReport
    from assay.web.upload_pool import Budget


@dataclass(frozen=True, slots=True)
class InputFile:
    """An attestation or policy as posted: a name for messages and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True, slots=True)
class FileValidation:
    """`assay attest validate` for one posted file."""

    name: str
    documents: tuple[Document, ...]

    @property
    def valid(self) -> bool:
        from assay.attestation.findings import Severity

        return all(f.severity is not Severity.ERROR for d in self.documents for f in d.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "valid": self.valid,
            "documents": [
                {
                    "location": d.location,
                    "kind": d.kind,
                    "payloadType": d.payload_type,
                    "predicateType": d.predicate_type,
                    "findings": [f.to_dict() for f in d.findings],
                }
                for d in self.documents
            ],
        }


@dataclass(frozen=True, slots=True)
class BundleNote:
    """What the offline Sigstore check said about one bundle."""

    attestation: str
    verified: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"attestation": self.attestation, "verified": self.verified, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class VerifyOutcome:
    validations: tuple[FileValidation, ...]
    report: VerificationReport
    policy_name: str
    bundles: tuple[BundleNote, ...] = ()
    artifacts_given: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The JSON twin: `assay verify --json`'s report, beside the validation findings."""
        return {
            "validation": [v.to_dict() for v in self.validations],
            "sigstoreBundles": [b.to_dict() for b in self.bundles],
            "report": self.report.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class VerifyRequest:
    attestations: tuple[InputFile, ...]
    policy_builtin: str | None = None
    policy_file: InputFile | None = None
    digests: tuple[str, ...] = field(default=())


def parse_digests(text: str, where: str = "artifact digests") -> tuple[str, ...]:
    """One `ALG:HEX` per line, blank lines skipped: the rule of every verification input
    (`assay.verify.request`), kept as `ALG:hex` in lowercase."""
    from assay.verify.request import parse_digest_lines

    return tuple(
        f"{algorithm}:{value}"
        for artifact in parse_digest_lines(text, where=where)
        for algorithm, value in artifact.digest.items()
    )


def validate_file(item: InputFile) -> FileValidation:
    """The validator of `assay attest validate` over one file's bytes."""
    from assay.attestation.documents import read_documents

    try:
        documents = read_documents(item.data)
    except AttestationError as error:
        where = error.where.replace("input", item.name, 1) if error.where else item.name
        raise AttestationError(where, error.reason) from None
    return FileValidation(item.name, tuple(documents))


def screen_policy_keys(data: bytes, source: str) -> None:
    """Refuse a posted policy whose keys are file paths: they would be read on the server."""
    document = _policy_document(data, source)
    if not isinstance(document, Mapping):
        return  # the policy reader names what is wrong
    for path, key in _public_keys(document):
        if isinstance(key, str) and "-----BEGIN" not in key:
            raise InputError(
                f"{source}: {path}",
                "a policy posted here must carry its public keys inline (PEM text); "
                f"found the file name {key[:120]!r}, and files on the server are not read",
            )


def _policy_document(data: bytes, source: str) -> Any:
    """The posted policy as read by the policy reader's own readers (a 400 at once when
    it is neither YAML nor JSON)."""
    from assay import _yaml_strict
    from assay.attestation import loads_strict
    from assay.policy.loader import MAX_POLICY_BYTES, MAX_POLICY_DEPTH

    try:
        if data.lstrip().startswith(b"{"):
            return loads_strict(data, where=source, limit=MAX_POLICY_BYTES)
        # No aliases, bounded depth.
        return _yaml_strict.load(data, source, max_depth=MAX_POLICY_DEPTH)
    except AttestationError as error:
        raise InputError(error.where, f"expected YAML or JSON: {error.reason}") from None


def _public_keys(document: Mapping[str, Any]) -> list[tuple[str, object]]:
    """Every signer's and VSA signer's public key entry, by JSON path (a `{key: ...}`
    entry followed to its key)."""
    found: list[tuple[str, object]] = []
    for section in ("signers", "vsaSigners"):
        signers = document.get(section)
        for index, signer in enumerate(signers if isinstance(signers, list) else []):
            keys = signer.get("publicKeys") if isinstance(signer, Mapping) else None
            for number, entry in enumerate(keys if isinstance(keys, list) else []):
                key, path = entry, f"$.{section}[{index}].publicKeys[{number}]"
                while isinstance(key, Mapping):
                    key, path = key.get("key"), f"{path}.key"
                found.append((path, key))
    return found


def read_policy(request: VerifyRequest) -> tuple[Policy, str]:
    """The policy to apply and the name it is shown under."""
    from assay.policy import load_policy, parse_policy

    if request.policy_builtin:
        name = request.policy_builtin
        from assay.policy.builtin import PREFIX

        return load_policy(f"{PREFIX}{name}"), f"{PREFIX}{name}"
    if request.policy_file is None:
        raise InputError("policy", "expected a shipped policy, an uploaded file or pasted text")
    item = request.policy_file
    screen_policy_keys(item.data, item.name)
    return parse_policy(item.data, source=item.name, base_dir=None), item.name


def bundle_notes(report: VerificationReport) -> tuple[BundleNote, ...]:
    """What the Verifier's own check of each attestation's Sigstore material found."""
    notes: list[BundleNote] = []
    for attestation in report.attestations:
        certificate = attestation.certificate
        if certificate is None:
            continue
        signature = certificate.signature
        if signature is None:
            notes.append(BundleNote(attestation.name, False, certificate.failure()))
            continue
        signer = signature.identity
        notes.append(
            BundleNote(
                attestation.name,
                True,
                f"signed by {signer.san} (issuer {signer.issuer}); trusted root "
                f"{signature.trusted_root}",
            )
        )
    return tuple(notes)


def run_verification(
    request: VerifyRequest, store: Store | None, budget: Budget | None = None
) -> VerifyOutcome:
    """Validate, read the policy, verify: the outcome the page renders. With `budget` (an
    upload's), each step and each store look-up first checks that time is left and the
    client is still there."""
    from assay.sigstore.roots import SHIPPED, shipped_root
    from assay.verify.certificates import SigstoreTrust
    from assay.verify.inputs import read_attestations
    from assay.verify.request import digest_artifact
    from assay.verify.verifier import Verifier

    if not request.attestations:
        raise InputError("attestation", "expected an uploaded or pasted attestation")
    check = budget.check if budget is not None else lambda: None
    validations = tuple(validate_file(item) for item in request.attestations)
    check()
    policy, policy_name = read_policy(request)
    check()
    attestations: list[Attestation] = []
    for item in request.attestations:
        attestations.extend(read_attestations(item.data, item.name))
    artifacts = [digest_artifact(text, where="artifact digests") for text in request.digests]
    checks = [] if policy.vulnerabilities is None else _vulnerability_checks(store, budget)
    # Offline: the shipped trusted roots; a legacy envelope without its log entry fails.
    report = Verifier(
        policy=policy,
        evidence=None,
        dependency_checks=checks,
        trust=SigstoreTrust(roots=[shipped_root(name) for name in SHIPPED]),
    ).verify(artifacts, attestations)
    return VerifyOutcome(
        validations, report, policy_name, bundle_notes(report), artifacts_given=bool(artifacts)
    )


def _vulnerability_checks(store: Store | None, budget: Budget | None) -> list[Any]:
    """The policy's `vulnerabilities:` check against the served store (none without one),
    each look-up within the upload's budget when there is one."""
    if store is None:
        return []
    from assay.audit import VulnerabilityCheck
    from assay.audit.store_source import StoreSource

    source: Any = StoreSource(store)
    if budget is not None:
        from assay.web.upload_pool import BudgetedSource

        source = BudgetedSource(source, budget)
    return [VulnerabilityCheck(source)]
