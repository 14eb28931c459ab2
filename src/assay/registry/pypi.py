"""`verify-pypi`: PEP 740 attestations of a distribution, against its Trusted Publisher.

    result = verify_distribution("pkg-1.0.tar.gz", sha256_hex, provenance_bytes,
                                 "pkg.provenance", PypiOptions("org/repo"), verifier)

PyPI's Integrity API serves a distribution's provenance
(`/integrity/NAME/VERSION/FILENAME/provenance`): attestation bundles, each with the
Trusted Publisher that uploaded them. Every attestation must verify (a Sigstore
certificate chained to a trusted root, its log entry, the signature) and say what
PyPI requires: one subject, the distribution's file name with its SHA-256, a publish
(`https://docs.pypi.org/attestations/publish/v1`) or SLSA v1 predicate, and a
certificate of the expected publisher: for GitHub, a workflow of `ORG/REPO` (and the
given workflow file) under GitHub Actions' issuer; for GitLab, a pipeline file of the
project under gitlab.com's issuer. A single attestation file (`.publish.attestation`)
is read as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote

from assay import protocol
from assay.errors import AttestationError, VerificationError
from assay.registry._subjects import one_subject
from assay.results import Check
from assay.sigstore import load_json
from assay.sigstore.verifier import BundleVerifier, VerifiedSignature

DEFAULT_INDEX: Final = "https://pypi.org"
PUBLISH_V1: Final = "https://docs.pypi.org/attestations/publish/v1"
SLSA_V1: Final = protocol.PROVENANCE_V1
GITHUB_ISSUER: Final = protocol.GITHUB_ACTIONS_ISSUER
GITLAB_ISSUER: Final = "https://gitlab.com"
_SDIST: Final = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+)\.(tar\.gz|zip)$")
_WHEEL: Final = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$"
)


@dataclass(frozen=True, slots=True)
class PypiOptions:
    repository: str
    """The Trusted Publisher's repository: ORG/REPO (GitHub) or GROUP/PROJECT (GitLab)."""
    workflow: str | None = None
    """Its workflow file (`release.yml`, `.github/workflows/release.yml`, `.gitlab-ci.yml`)."""


def provenance_url(index: str, name: str, version: str, filename: str) -> str:
    parts = (quote(name, safe=""), quote(version, safe=""), quote(filename, safe=""))
    return f"{index.rstrip('/')}/integrity/{parts[0]}/{parts[1]}/{parts[2]}/provenance"


def release_url(index: str, name: str, version: str) -> str:
    return f"{index.rstrip('/')}/pypi/{quote(name, safe='')}/{quote(version, safe='')}/json"


def name_and_version(filename: str) -> tuple[str, str]:
    """A distribution's project name and version, from its file name."""
    match = _WHEEL.match(filename) or _SDIST.match(filename)
    if match is None:
        raise AttestationError(filename, "expected a wheel or sdist file name (NAME-VERSION...)")
    return match.group("name"), match.group("version")


def release_files(data: bytes, where: str) -> list[tuple[str, str]]:
    """(file name, sha256) of each distribution of PyPI's JSON API answer for a release."""
    document = load_json(data, where)
    urls = document.get("urls") if isinstance(document, dict) else None
    if not isinstance(urls, list):
        raise AttestationError(f"{where}: $.urls", "expected the release's distributions")
    found = []
    for number, item in enumerate(urls):
        try:
            filename, sha256 = item["filename"], item["digests"]["sha256"]
        except (KeyError, TypeError):
            raise AttestationError(
                f"{where}: $.urls[{number}]", "expected filename and digests.sha256"
            ) from None
        found.append((str(filename), str(sha256)))
    if not found:
        raise AttestationError(f"{where}: $.urls", "expected at least one distribution")
    return found


def _normalized(filename: str) -> str:
    return filename.lower().replace("-", "_")


@dataclass(slots=True)
class AttestationResult:
    where: str
    publisher: dict[str, Any] | None
    checks: list[Check] = field(default_factory=list)
    signature: VerifiedSignature | None = None
    predicate_type: str | None = None

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "attestation": self.where,
            "passed": self.passed,
            "publisher": self.publisher,
            "predicateType": self.predicate_type,
            "signature": self.signature.to_dict() if self.signature else None,
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass(slots=True)
class DistributionVerification:
    filename: str
    sha256: str
    source: str
    attestations: list[AttestationResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.attestations) and all(a.passed for a in self.attestations)

    def failures(self) -> list[Check]:
        return [c for a in self.attestations for c in a.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "distribution": self.filename,
            "digest": {"sha256": self.sha256},
            "provenance": self.source,
            "passed": self.passed,
            "attestations": [a.to_dict() for a in self.attestations],
        }


def _publishers(data: bytes, where: str) -> list[dict[str, Any] | None]:
    """The publisher of each `attestation_bundles` group (None where there is none)."""
    document = load_json(data, where)
    groups = document.get("attestation_bundles") if isinstance(document, dict) else None
    if not isinstance(groups, list):
        return []
    publishers = [g.get("publisher") if isinstance(g, dict) else None for g in groups]
    return [p if isinstance(p, dict) else None for p in publishers]


def _group_index(location: str) -> int:
    """The `attestation_bundles` group a record's location is in (0 for a lone one)."""
    match = re.search(r"attestation_bundles\[(\d+)\]", location)
    return int(match.group(1)) if match else 0


def _groups(
    data: bytes, where: str
) -> list[tuple[dict[str, Any] | None, list[tuple[str, dict[str, Any]]]]]:
    """(publisher, [(label, bundle)]) of a provenance object or one attestation."""
    from assay.attestation.files import parse_file

    publishers = _publishers(data, where)
    groups: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for record in parse_file(data, where):
        if record.kind != "sigstore-bundle":
            raise AttestationError(record.label, "expected a PEP 740 attestation")
        groups.setdefault(_group_index(record.location), []).append((record.label, record.document))
    if not groups:
        raise AttestationError(where, "expected PEP 740 attestations")
    return [
        (publishers[i] if i < len(publishers) else None, items)
        for i, items in sorted(groups.items())
    ]


def verify_distribution(  # noqa: PLR0917 - what, evidence, rules, trust
    filename: str,
    sha256: str,
    data: bytes,
    where: str,
    options: PypiOptions,
    verifier: BundleVerifier,
) -> DistributionVerification:
    """The verdict for one distribution: every attestation of its provenance passes."""
    if options.repository.count("/") < 1 or not all(options.repository.split("/")):
        raise AttestationError("repository", f"expected ORG/REPO, got {options.repository!r}")
    result = DistributionVerification(filename, sha256, where)
    for publisher, bundles in _groups(data, where):
        for label, bundle in bundles:
            item = AttestationResult(label, publisher)
            result.attestations.append(item)
            _attestation_checks(item, bundle, result, options, verifier)
    return result


def _attestation_checks(
    item: AttestationResult,
    bundle: dict[str, Any],
    result: DistributionVerification,
    options: PypiOptions,
    verifier: BundleVerifier,
) -> None:
    """One attestation: its signature, then its statement and its publisher."""
    try:
        verified = verifier.verify(bundle, item.where)
    except VerificationError as error:
        item.checks.append(
            Check("signature", False, "a verified Sigstore bundle", None, str(error))
        )
        return
    item.signature = verified
    item.checks.append(Check("signature", True, "a verified Sigstore bundle", "verified"))
    assert verified.payload is not None
    statement = load_json(verified.payload, f"{item.where}: payload")
    _statement_checks(
        item, statement if isinstance(statement, dict) else {}, result.filename, result.sha256
    )
    _publisher_checks(item, verified, item.publisher, options)


def _statement_checks(
    item: AttestationResult, statement: dict[str, Any], filename: str, sha256: str
) -> None:
    item.predicate_type = statement.get("predicateType")
    item.checks.append(
        Check(
            "predicateType",
            item.predicate_type in (PUBLISH_V1, SLSA_V1),
            [PUBLISH_V1, SLSA_V1],
            item.predicate_type,
        )
    )
    check, subject = one_subject(statement, "subjects")
    item.checks.append(check)
    if subject is None:
        return
    name = subject.get("name")
    item.checks.append(
        Check(
            "subject.name",
            isinstance(name, str) and _normalized(name) == _normalized(filename),
            filename,
            name,
        )
    )
    digest = (subject.get("digest") or {}).get("sha256")
    item.checks.append(Check("subject.sha256", digest == sha256, sha256, digest))


def _expected_san(repository: str, workflow: str | None, *, gitlab: bool) -> str:
    """What the certificate's SAN starts with: the repository's workflow (at any ref)."""
    if gitlab:
        prefix = f"{repository}//"
    else:
        prefix = f"{repository}/.github/workflows/"
        workflow = workflow.removeprefix(".github/workflows/") if workflow else None
    return f"{prefix}{workflow}@" if workflow else prefix


def _publisher_checks(
    item: AttestationResult,
    verified: VerifiedSignature,
    publisher: dict[str, Any] | None,
    options: PypiOptions,
) -> None:
    identity = verified.identity
    gitlab = identity.issuer == GITLAB_ISSUER or (publisher or {}).get("kind") == "GitLab"
    host, issuer = ("gitlab.com", GITLAB_ISSUER) if gitlab else ("github.com", GITHUB_ISSUER)
    repository = f"https://{host}/{options.repository}"
    san = identity.san or ""
    expected = _expected_san(repository, options.workflow, gitlab=gitlab)
    item.checks += [
        Check("certificate.issuer", identity.issuer == issuer, issuer, identity.issuer),
        Check(
            "certificate.sourceRepository",
            identity.source_repository_uri == repository,
            repository,
            identity.source_repository_uri,
        ),
        Check("certificate.san", san.startswith(expected), f"{expected}...", san),
    ]
    item.checks += _declared_repository(publisher, options.repository)


def _declared_repository(publisher: dict[str, Any] | None, repository: str) -> list[Check]:
    """The repository PyPI says published it, when it says one, is the one expected."""
    declared = (publisher or {}).get("repository")
    if not isinstance(declared, str):
        return []
    return [Check("publisher.repository", declared == repository, repository, declared)]
