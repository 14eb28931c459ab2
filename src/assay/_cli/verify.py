"""`assay verify` (artifacts against a policy, issuing a VSA) and `assay verify-vsa`."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree, add_list_option
from assay._cli.attest_signing import load_public_keys, read_limited
from assay._cli.keys import read_passphrase
from assay.errors import InputError

if TYPE_CHECKING:
    from assay.policy import Policy
    from assay.verify.verifier import Artifact, Attestation, VerificationReport

MAX_ARTIFACTS: Final = 1000
MAX_ATTESTATION_FILES: Final = 10_000
_DIGEST_ARGUMENT: Final = re.compile(r"^(sha256|sha384|sha512):([0-9a-fA-F]+)$")


def register(tree: CommandTree) -> None:
    verify = tree.command(
        "verify",
        help="Verify artifacts' provenance against a policy; optionally issue a VSA.",
        handler=_verify,
    )
    verify.add_argument(
        "artifacts", nargs="+", metavar="ARTIFACT", help="artifact file (or ALG:HEX digest)"
    )
    add_list_option(verify, "--attestation", required=True, metavar="FILE")
    verify.add_argument("--policy", required=True, metavar="FILE")
    verify.add_argument("--resource-uri", metavar="URI", help="resource URI (for the VSA)")
    verify.add_argument(
        "--attestation-dir",
        metavar="DIR",
        help="provenance and VSAs of dependencies, to resolve dependency levels",
    )
    verify.add_argument("--vsa-out", metavar="FILE", help="write a VSA v1 here")
    verify.add_argument("--vsa-key", metavar="KEY", help="sign the VSA with this private key")
    verify.add_argument("--passphrase-env", metavar="VAR", help="passphrase of --vsa-key")
    verify.add_argument("--verifier-id", metavar="URI", help="verifier.id of the VSA")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")

    check = tree.command(
        "verify-vsa",
        help="Verify a verification summary attestation (the VSA spec's seven steps).",
        handler=_verify_vsa,
    )
    check.add_argument("file", metavar="FILE", help="DSSE envelope holding the VSA")
    add_list_option(check, "--subject-digest", required=True, metavar="ALG:HEX", dest="digests")
    check.add_argument("--verifier-id", required=True, metavar="URI")
    add_list_option(check, "--key", required=True, metavar="PUB")
    check.add_argument("--resource-uri", required=True, metavar="URI")
    add_list_option(check, "--level", default=[], metavar="LEVEL")
    check.add_argument("--json", action="store_true")


def _artifact(text: str) -> Artifact:
    import hashlib

    from assay.verify.verifier import Artifact

    path = Path(text)
    if not path.exists():
        match = _DIGEST_ARGUMENT.match(text)
        if match:
            return Artifact(text, {match.group(1): match.group(2).lower()})
        raise InputError(text, "expected an artifact file or a digest ALG:HEX, found neither")
    sha256, sha512 = hashlib.sha256(), hashlib.sha512()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                sha256.update(chunk)
                sha512.update(chunk)
    except OSError as error:
        raise InputError(text, f"cannot read: {error.strerror}") from None
    return Artifact(path.name, {"sha256": sha256.hexdigest(), "sha512": sha512.hexdigest()})


def _read_directory(directory: str) -> list[Attestation]:
    from assay.verify.inputs import MAX_ATTESTATION_BYTES, read_attestations

    root = Path(directory)
    if not root.is_dir():
        raise InputError("--attestation-dir", f"expected a directory, got {directory!r}")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    if len(files) > MAX_ATTESTATION_FILES:
        raise InputError(directory, f"expected at most {MAX_ATTESTATION_FILES} files")
    result = []
    for file in files:
        if file.stat().st_size > MAX_ATTESTATION_BYTES:
            continue
        try:
            result.extend(read_attestations(file.read_bytes(), str(file)))
        except InputError:
            continue  # not an attestation: the directory may hold other files
    return result


def _verify(args: argparse.Namespace) -> int:
    from assay.keys import MAX_PEM_BYTES, load_private_key
    from assay.policy import load_policy
    from assay.verify.inputs import MAX_ATTESTATION_BYTES, read_attestations
    from assay.verify.verifier import evaluate

    if len(args.artifacts) > MAX_ARTIFACTS:
        raise InputError("ARTIFACT", f"expected at most {MAX_ARTIFACTS} artifacts")
    if args.vsa_out and not args.verifier_id:
        raise InputError("--verifier-id", "required with --vsa-out")
    if (args.vsa_key or args.verifier_id) and not args.vsa_out:
        raise InputError("--vsa-out", "required with --vsa-key and --verifier-id")
    policy = load_policy(args.policy)
    resource_uri = args.resource_uri or policy.resource_uri
    if args.vsa_out and not resource_uri:
        raise InputError(
            "--resource-uri", "a VSA needs a resource URI (flag or policy resourceUri)"
        )
    signer = None
    if args.vsa_key:
        signer = load_private_key(
            read_limited(args.vsa_key, MAX_PEM_BYTES),
            passphrase=read_passphrase(args.passphrase_env),
            where=args.vsa_key,
        )
    artifacts = [_artifact(a) for a in args.artifacts]
    attestations = [
        attestation
        for file in args.attestation
        for attestation in read_attestations(read_limited(file, MAX_ATTESTATION_BYTES), file)
    ]
    report = evaluate(policy, artifacts, attestations)
    if args.attestation_dir or policy.dependencies is not None:
        _dependencies(report, policy, args.attestation_dir)
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, default=str) + "\n")
    else:
        _print_report(report)
    if args.vsa_out:
        _write_vsa(args, report, attestations, resource_uri or "", signer)
    return EXIT_OK if report.passed else EXIT_FAILED


def _dependencies(report: VerificationReport, policy: Policy, directory: str | None) -> None:
    from assay.verify.checks import Check
    from assay.verify.evidence import EvidenceIndex
    from assay.verify.levels import resolve_dependencies

    passing = {name for result in report.artifacts for name in result.attestations}
    dependencies = [
        dep
        for attestation in report.attestations
        if attestation.name in passing and attestation.claims is not None
        for dep in attestation.claims.dependencies
    ]
    if not passing:
        return  # nothing verified: no dependency claim can be made
    index = EvidenceIndex(policy, _read_directory(directory) if directory else [])
    result = resolve_dependencies(dependencies, index, policy.dependencies)
    report.dependency_levels = result.levels
    report.extra_checks.extend(result.checks)
    if result.missing:
        report.extra_checks.append(
            Check(
                "dependencies (evidence)",
                policy.dependencies is None or policy.dependencies.minimum_level == 0,
                "provenance or a trusted VSA for every non-source dependency",
                {"missing": result.missing},
                "reported; fails only when the policy sets a minimum dependency level",
            )
        )


def _print_report(report: VerificationReport) -> None:
    out = sys.stderr
    for attestation in report.attestations:
        print(f"{attestation.name}:", file=out)
        for check in attestation.checks:
            mark = "PASS" if check.passed else "FAIL"
            print(
                f"  {mark} {check.name}: expected {check.expected!r}, found {check.found!r}"
                + (f" ({check.detail})" if check.detail else ""),
                file=out,
            )
    for check in report.extra_checks:
        mark = "PASS" if check.passed else "FAIL"
        print(
            f"  {mark} {check.name}: expected {check.expected!r}, found {check.found!r}", file=out
        )
    for result in report.artifacts:
        state = "PASSED" if result.passed else "FAILED"
        level = f" at SLSA_BUILD_LEVEL_{result.level}" if result.level is not None else ""
        print(f"{state}: {result.artifact.name}{level}", file=out)
    if report.dependency_levels is not None:
        print(f"dependencyLevels: {report.dependency_levels}", file=out)
    print(
        "PASSED: verification passed" if report.passed else "FAILED: verification failed", file=out
    )


def _write_vsa(
    args: argparse.Namespace,
    report: VerificationReport,
    attestations: list[Attestation],
    resource_uri: str,
    signer: Any,
) -> None:
    from assay import dsse
    from assay.verify import vsa

    seen: dict[str, dict[str, str]] = {}
    for attestation in attestations:
        seen.setdefault(attestation.name.split("#", 1)[0], attestation.digest)
    statement = vsa.build_vsa(
        vsa.VsaInput(
            subjects=[(r.artifact.name, r.artifact.digest) for r in report.artifacts],
            verifier_id=args.verifier_id,
            resource_uri=resource_uri,
            policy_uri=report.policy.uri,
            policy_digest=report.policy.digest,
            passed=report.passed,
            level=report.level,
            input_attestations=list(seen.items()),
            dependency_levels=report.dependency_levels,
        )
    )
    payload = vsa.serialize(statement)
    if signer is not None:
        envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [signer])
        text = json.dumps(envelope.to_dict(), indent=2) + "\n"
    else:
        text = json.dumps(statement, indent=2) + "\n"
    Path(args.vsa_out).write_text(text)


def _verify_vsa(args: argparse.Namespace) -> int:
    from assay.verify import vsa
    from assay.verify.inputs import MAX_ATTESTATION_BYTES, read_attestations

    keys = load_public_keys(args.key)
    attestations = read_attestations(read_limited(args.file, MAX_ATTESTATION_BYTES), args.file)
    if len(attestations) != 1:
        raise InputError(args.file, f"expected one VSA envelope, found {len(attestations)}")
    result = vsa.check_vsa(
        attestations[0].envelope,
        trusted={args.verifier_id: keys},
        subject_digests=[vsa.parse_digest(d) for d in args.digests],
        verifier_id=args.verifier_id,
        resource_uri=args.resource_uri,
        levels=args.level,
    )
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, default=str) + "\n")
    else:
        for check in result.checks:
            mark = "PASS" if check.passed else "FAIL"
            print(
                f"  {mark} {check.name}: expected {check.expected!r}, found {check.found!r}"
                + (f" ({check.detail})" if check.detail else ""),
                file=sys.stderr,
            )
        print(
            "PASSED: VSA verified" if result.passed else "FAILED: VSA did not verify",
            file=sys.stderr,
        )
    return EXIT_OK if result.passed else EXIT_FAILED
