"""`verify-npm-package`: slsa-verifier's verification of an npm package's attestations.

    result = verify_npm_package("pkg.tgz", sha512_hex, document_bytes, "att.json",
                                NpmOptions(source_uri="github.com/o/r", builder_id=...),
                                BundleVerifier(select_roots()), registry_keys())

npm serves two attestations per version (`/-/npm/v1/attestations/NAME@VERSION`), and
both must verify, together:

- the provenance (SLSA v0.2 or v1), a Sigstore bundle certified by Fulcio for a GitHub
  Actions workflow of `source_uri`: built by the npm CLI on a GitHub-hosted runner
  (builder `https://github.com/actions/runner/github-hosted`; provenance v0.2 also names
  it `https://github.com/actions/runner`) or by slsa-github-generator's Node.js builder
  (a BYOB builder: the certificate is the delegator's reusable workflow at a release
  tag, the provenance names the Node.js builder);
- npm's publish attestation, a bundle signed with the registry's key
  (`keyUsage: npm:attestations`) whose log entry records that key and signature;
- each statement has one subject, the package `pkg:npm/NAME@VERSION` with the tarball's
  SHA-512, the same in both; the publish attestation's name and version are the
  package's, and the expected ones when given.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from assay import protocol
from assay.errors import AttestationError, VerificationError
from assay.keys import PublicKey, load_public_key
from assay.policy.refs import is_release_tag, normalize_repository, split_ref
from assay.policy.slsa_github import GENERATOR, GITHUB_ISSUER, Options, testing_mode
from assay.registry._subjects import one_subject
from assay.results import Check
from assay.sigstore import load_json
from assay.sigstore.verifier import BundleVerifier, VerifiedSignature
from assay.verify.artifact import check_options

if TYPE_CHECKING:
    from assay.dsse import Envelope
    from assay.sigstore.keyed import LoggedSignatures

DEFAULT_REGISTRY: Final = "https://registry.npmjs.org"
PUBLISH_PREDICATE: Final = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
PROVENANCE_V02: Final = protocol.PROVENANCE_V02
PROVENANCE_V1: Final = protocol.PROVENANCE_V1
NPM_CLI_BUILDER: Final = "https://github.com/actions/runner/github-hosted"
NPM_CLI_BUILDER_V02: Final = "https://github.com/actions/runner"
NODEJS_BUILDER: Final = GENERATOR + "builder_nodejs_slsa3.yml"
DELEGATORS: Final = (
    GENERATOR + "delegator_generic_slsa3.yml",
    GENERATOR + "delegator_lowperms-generic_slsa3.yml",
)
KEY_USAGE: Final = "npm:attestations"


@dataclass(frozen=True, slots=True)
class NpmOptions:
    source_uri: str
    package_name: str | None = None
    package_version: str | None = None
    builder_id: str | None = None


def attestations_url(registry: str, name: str, version: str) -> str:
    """npm's URL for a version's attestations (a scope's `/` escaped as npm escapes it)."""
    escaped = quote(name, safe="@")
    return f"{registry.rstrip('/')}/-/npm/v1/attestations/{escaped}@{quote(version, safe='')}"


def _registry_key(entry: dict[str, Any], where: str) -> PublicKey:
    """One entry of npm's `keys` (its `publicKey.rawBytes`: base64 DER)."""
    try:
        der = base64.b64decode(entry["publicKey"]["rawBytes"], validate=True)
    except (KeyError, TypeError, ValueError):
        raise AttestationError(f"{where}.publicKey.rawBytes", "expected base64 DER") from None
    pem = b"-----BEGIN PUBLIC KEY-----\n" + base64.encodebytes(der) + b"-----END PUBLIC KEY-----\n"
    return load_public_key(pem, where=where, keyid=entry.get("keyId", ""))


def _json_array(data: bytes, where: str, key: str, expected: str) -> list[Any]:
    """The array `key` of one of npm's JSON documents (keys, attestations), else refused
    as not the `expected` list."""
    document = load_json(data, where)
    items = document.get(key) if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise AttestationError(f"{where}: $.{key}", f"expected {expected}")
    return items


def registry_keys(data: bytes | None = None, where: str = "npm-registry.json") -> list[PublicKey]:
    """npm's keys for publish attestations: the shipped `keys.json`, or `data`."""
    if data is None:
        data = resources.files("assay.registry").joinpath("keys/npm-registry.json").read_bytes()
    keys = _json_array(data, where, "keys", "a list of keys")
    found = [
        _registry_key(entry, f"{where}: $.keys[{number}]")
        for number, entry in enumerate(keys)
        if isinstance(entry, dict) and entry.get("keyUsage") == KEY_USAGE
    ]
    if not found:
        raise AttestationError(f"{where}: $.keys", f"expected a key with keyUsage {KEY_USAGE}")
    return found


@dataclass(slots=True)
class NpmVerification:
    artifact: str
    sha512: str
    checks: list[Check] = field(default_factory=list)
    provenance: VerifiedSignature | None = None
    publish_logged: dict[str, Any] | None = None
    builder_id: str | None = None
    package: tuple[str, str] | None = None

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "artifact": {"name": self.artifact, "digest": {"sha512": self.sha512}},
            "package": (
                {"name": self.package[0], "version": self.package[1]} if self.package else None
            ),
            "builderId": self.builder_id,
            "provenance": self.provenance.to_dict() if self.provenance else None,
            "publishAttestation": self.publish_logged,
            "checks": [c.to_dict() for c in self.checks],
        }


_ATTESTATION_KINDS: Final[dict[str, str]] = {
    PUBLISH_PREDICATE: "publish",
    PROVENANCE_V02: "provenance",
    PROVENANCE_V1: "provenance",
}
"""The attestations npm serves, by predicate type."""


def _kind_and_bundle(item: Any, at: str) -> tuple[str, dict[str, Any]]:
    """An entry's kind (`publish`, `provenance`) by its predicate type, and its bundle."""
    if not isinstance(item, dict) or not isinstance(item.get("bundle"), dict):
        raise AttestationError(at, "expected {predicateType, bundle}")
    predicate_type = item.get("predicateType")
    kind = _ATTESTATION_KINDS.get(predicate_type) if isinstance(predicate_type, str) else None
    if kind is None:
        raise AttestationError(
            f"{at}.predicateType", f"expected publish or provenance, found {predicate_type!r}"
        )
    return kind, item["bundle"]


def _attestations(data: bytes, where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(publish bundle, provenance bundle) of npm's attestations document."""
    bundles: dict[str, list[dict[str, Any]]] = {"publish": [], "provenance": []}
    for number, item in enumerate(
        _json_array(data, where, "attestations", "npm's list of attestations")
    ):
        kind, bundle = _kind_and_bundle(item, f"{where}: $.attestations[{number}]")
        bundles[kind].append(bundle)
    publish, provenance = bundles["publish"], bundles["provenance"]
    if len(publish) != 1 or len(provenance) != 1:
        raise AttestationError(
            f"{where}: $.attestations",
            f"expected one publish attestation and one provenance, found {len(publish)} and"
            f" {len(provenance)}",
        )
    return publish[0], provenance[0]


def _statement(payload: bytes, where: str) -> dict[str, Any]:
    statement = load_json(payload, f"{where}: payload")
    if not isinstance(statement, dict):
        raise AttestationError(f"{where}: payload", "expected an in-toto statement")
    return statement


def _purl(name: str, version: str) -> str:
    return f"pkg:npm/{quote(name, safe='/')}@{version}"


def _publish_signature(
    bundle: dict[str, Any], label: str, verifier: BundleVerifier, keys: list[PublicKey]
) -> tuple[LoggedSignatures, Envelope, set[str]]:
    """The publish attestation's log entry, envelope and signing keys: signed by npm's
    registry key, and that signature the one the log entry records."""
    from assay import dsse
    from assay.sigstore.keyed import verify_logged_envelope

    logged = verify_logged_envelope(bundle, label, verifier)
    envelope = dsse.Envelope.from_dict(bundle["dsseEnvelope"], where=f"{label}: $.dsseEnvelope")
    check = dsse.check_signatures(envelope, keys, 1)
    signers = {key.fingerprint() for key in check.signed_by if isinstance(key, PublicKey)}
    if not signers & logged.key_fingerprints:
        raise VerificationError(
            f"{label}: no signature by npm's registry key that the log entry records"
        )
    return logged, envelope, signers


def verify_npm_package(  # noqa: PLR0917 - as verify_artifacts: what, evidence, rules, trust
    artifact: str,
    sha512: str,
    data: bytes,
    where: str,
    options: NpmOptions,
    verifier: BundleVerifier,
    keys: list[PublicKey],
) -> NpmVerification:
    """The verdict for the tarball (its SHA-512) given npm's attestations document."""
    check_options(Options(source_uri=options.source_uri))
    result = NpmVerification(artifact, sha512)
    publish_bundle, provenance_bundle = _attestations(data, where)
    # the provenance: Fulcio-certified
    try:
        verified = verifier.verify(provenance_bundle, f"{where} (provenance)")
    except VerificationError as error:
        result.checks.append(
            Check("provenance.signature", False, "a verified Sigstore bundle", None, str(error))
        )
        return result
    result.provenance = verified
    result.checks.append(
        Check("provenance.signature", True, "a verified Sigstore bundle", verified.media_type)
    )
    # the publish attestation: the registry's key, logged
    label = f"{where} (publish attestation)"
    try:
        logged, envelope, signers = _publish_signature(publish_bundle, label, verifier, keys)
    except VerificationError as error:
        result.checks.append(
            Check("publish.signature", False, "npm's registry key", None, str(error))
        )
        return result
    result.publish_logged = logged.to_dict()
    result.checks.append(Check("publish.signature", True, "npm's registry key", sorted(signers)))
    assert verified.payload is not None
    provenance = _statement(verified.payload, f"{where} (provenance)")
    publish = _statement(envelope.payload, label)
    _subject_checks(result, provenance, publish, sha512)
    _package_checks(result, publish, options)
    _builder_checks(result, verified, provenance, options)
    return result


def _one_subject(
    result: NpmVerification, kind: str, statement: dict[str, Any], sha512: str
) -> dict[str, Any] | None:
    """Checks that the statement has one subject, of the tarball's sha512; that subject."""
    check, subject = one_subject(statement, f"{kind}.subjects")
    result.checks.append(check)
    if subject is None:
        return None
    digest = (subject.get("digest") or {}).get("sha512")
    result.checks.append(Check(f"{kind}.subject.sha512", digest == sha512, sha512, digest))
    return subject


def _subject_checks(
    result: NpmVerification, provenance: dict[str, Any], publish: dict[str, Any], sha512: str
) -> None:
    names = [
        _one_subject(result, kind, statement, sha512)
        for kind, statement in (("provenance", provenance), ("publish", publish))
    ]
    if names[0] is not None and names[1] is not None:
        provenance_name, publish_name = names[0].get("name"), names[1].get("name")
        result.checks.append(
            Check("subject.name", provenance_name == publish_name, publish_name, provenance_name)
        )


def _predicate(statement: dict[str, Any]) -> dict[str, Any]:
    """The statement's predicate; empty when it has none or it is not an object."""
    value = statement.get("predicate")
    return value if isinstance(value, dict) else {}


def _package_checks(result: NpmVerification, publish: dict[str, Any], options: NpmOptions) -> None:
    predicate: Any = _predicate(publish)
    name, version = predicate.get("name"), predicate.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        result.checks.append(
            Check("publish.predicate", False, "the package's name and version", predicate)
        )
        return
    result.package = (name, version)
    subjects = publish.get("subject") or [{}]
    found = subjects[0].get("name") if isinstance(subjects[0], dict) else None
    result.checks.append(
        Check("publish.subject.name", found == _purl(name, version), _purl(name, version), found)
    )
    result.checks += _wanted_package(options, name, version)


def _wanted_package(options: NpmOptions, name: str, version: str) -> list[Check]:
    """The package's name and version are the ones asked for (when asked)."""
    wanted = (
        ("package.name", options.package_name, name),
        ("package.version", options.package_version, version),
    )
    return [
        Check(check, found == want, want, found)
        for check, want, found in wanted
        if want is not None
    ]


def _provenance_builder(statement: dict[str, Any]) -> str | None:
    predicate: Any = _predicate(statement)
    builder = predicate.get("builder") or (predicate.get("runDetails") or {}).get("builder") or {}
    value = builder.get("id") if isinstance(builder, dict) else None
    return value if isinstance(value, str) else None


def _certificate_repository(verified: VerifiedSignature) -> str | None:
    identity = verified.identity
    if identity.source_repository_uri:
        return identity.source_repository_uri
    workflow_repository = identity.github_workflow_repository
    return f"https://github.com/{workflow_repository}" if workflow_repository else None


def _npm_cli_checks(
    verified: VerifiedSignature, found: str | None, repository: str | None, v02: bool
) -> list[Check]:
    """npm's own builder: the provenance names it, the certificate a workflow of the repo."""
    name = NPM_CLI_BUILDER_V02 if v02 else NPM_CLI_BUILDER
    san = verified.identity.san or ""
    in_repo = repository is not None and san.startswith(f"{repository}/.github/workflows/")
    return [
        Check("provenance.builderId", found == name, name, found),
        Check("certificate.san", in_repo, f"a workflow of {repository}", verified.identity.san),
    ]


def _released(ref: str | None) -> bool:
    """Whether a delegator ref is a release tag (or, in testing mode, `main`)."""
    if ref is None:
        return False
    return is_release_tag(ref) or (testing_mode() and ref == "refs/heads/main")


def _nodejs_builder_checks(verified: VerifiedSignature, found: str | None) -> list[Check]:
    # A BYOB builder: the certificate is slsa-github-generator's delegator's, at a
    # release tag; the provenance names the Node.js builder.
    san_workflow, san_ref = split_ref(verified.identity.san or "")
    released = _released(san_ref)
    found_name = split_ref(found or "")[0]
    return [
        Check(
            "certificate.builder",
            san_workflow in DELEGATORS and released,
            [f"{d}@refs/tags/vX.Y.Z" for d in DELEGATORS],
            verified.identity.san,
        ),
        Check("provenance.builderId", found_name == NODEJS_BUILDER, NODEJS_BUILDER, found),
    ]


def _builder_checks(
    result: NpmVerification,
    verified: VerifiedSignature,
    provenance: dict[str, Any],
    options: NpmOptions,
) -> None:
    issuer = verified.identity.issuer
    repository = _certificate_repository(verified)
    expected_repo = "https://" + normalize_repository(options.source_uri)
    result.checks += [
        Check("certificate.issuer", issuer == GITHUB_ISSUER, GITHUB_ISSUER, issuer),
        Check(
            "certificate.sourceRepository", repository == expected_repo, expected_repo, repository
        ),
    ]
    found = _provenance_builder(provenance)
    result.builder_id = found
    if options.builder_id is None:
        result.checks.append(
            Check(
                "builderId",
                False,
                "the expected builder id",
                None,
                "npm packages are verified against a given builder id",
            )
        )
        return
    name, _ = split_ref(options.builder_id)
    if name in (NPM_CLI_BUILDER, NPM_CLI_BUILDER_V02):
        v02 = provenance.get("predicateType") == PROVENANCE_V02
        accepted = {NPM_CLI_BUILDER, NPM_CLI_BUILDER_V02} if v02 else {NPM_CLI_BUILDER}
        result.checks.append(
            Check("builderId", name in accepted, sorted(accepted), options.builder_id)
        )
        result.checks += _npm_cli_checks(verified, found, repository, v02)
    elif name == NODEJS_BUILDER:
        result.checks += _nodejs_builder_checks(verified, found)
    else:
        result.checks.append(
            Check(
                "builderId",
                False,
                [NPM_CLI_BUILDER, NODEJS_BUILDER],
                options.builder_id,
                "not a builder of npm packages assay trusts",
            )
        )


def tarball_package(data: bytes, where: str) -> tuple[str, str]:
    """(name, version) from a tarball's `package/package.json` (bounded)."""
    import io
    import tarfile

    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            member = archive.getmember("package/package.json")
            if member.size > 1024 * 1024:
                raise AttestationError(where, "expected package/package.json under 1 MiB")
            handle = archive.extractfile(member)
            manifest = json.loads(handle.read() if handle else b"")
    except (tarfile.TarError, KeyError, ValueError, OSError):
        raise AttestationError(where, "expected an npm tarball with package/package.json") from None
    name, version = manifest.get("name"), manifest.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise AttestationError(f"{where}: package/package.json", "expected name and version")
    return name, version
