"""`assay verify` (artifacts against a policy, issuing a VSA) and `assay verify-vsa`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, Final

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree
from assay._cli._options import JSON_REPORT, add_options, json_option, list_option, option
from assay._cli.attest_signing import load_public_keys, read_limited, write_output
from assay._cli.keys import read_passphrase
from assay._cli.verify_common import ARTIFACTS, TRUST, bundle_verifier, rekor_lookup
from assay.errors import InputError

if TYPE_CHECKING:
    from assay.results import Check
    from assay.verify.model import Artifact, Attestation
    from assay.verify.verifier import VerificationReport


_VSA_EXAMPLE: Final = """\
example:
  assay verify-vsa widget.vsa.json \\
      --subject-digest sha256:6f3a0e4b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f \\
      --verifier-id https://verifier.example/assay \\
      --key verifier.pub \\
      --resource-uri pkg:generic/widget@1.0 \\
      --level SLSA_BUILD_LEVEL_2

exit status: 0 the VSA passed every step, 1 it did not, 2 unusable input.
"""


def register(tree: CommandTree) -> None:
    from assay._cli.scan_vex import add_vex_options

    verify = tree.command(
        "verify",
        help="Verify artifacts' provenance against a policy; optionally issue a VSA.",
        handler=_verify,
    )
    add_options(
        verify,
        ARTIFACTS,
        list_option(
            "--attestation",
            required=True,
            metavar="FILE",
            help="attestation file(s) about the artifacts: DSSE envelope, .intoto.jsonl, "
            "Sigstore bundle or gcloud output (several after the flag, or the flag repeated)",
        ),
        option(
            "--policy",
            required=True,
            metavar="FILE",
            help="the verification policy (YAML or JSON; see docs/verification.md)",
        ),
        list_option(
            "--param",
            default=[],
            metavar="NAME=VALUE",
            help="a value for a parameter the policy declares, e.g. repository=github.com/ORG/REPO "
            "for the shipped slsa-github-generator policies (repeatable; `assay policies show`)",
        ),
        option("--resource-uri", metavar="URI", help="resource URI (for the VSA)"),
        option(
            "--attestation-dir",
            metavar="DIR",
            help="provenance and VSAs of dependencies, to resolve dependency levels",
        ),
        option("--vsa-out", metavar="FILE", help="write a VSA v1 here"),
        option("--vsa-key", metavar="KEY", help="sign the VSA with this private key"),
        option("--passphrase-env", metavar="VAR", help="passphrase of --vsa-key"),
        option("--verifier-id", metavar="URI", help="verifier.id of the VSA"),
        JSON_REPORT,
        *TRUST,
        option(
            "--insecure-ignore-tlog",
            action="store_true",
            help="accept legacy Sigstore envelopes without a transparency-log entry "
            "(said in the report and in the VSA)",
        ),
        option(
            "--rekor-url",
            metavar="URL",
            help="look legacy Sigstore envelopes up in this Rekor, online "
            "(e.g. https://rekor.sigstore.dev)",
        ),
        option(
            "--store",
            metavar="URL",
            help="vulnerability store for a policy's vulnerabilities: rule (default: $ASSAY_STORE "
            "or the SQLite file in the user data directory)",
        ),
        option(
            "--vulns-out",
            metavar="FILE",
            help="write the vulnerability scan the vulnerabilities: rule performed as an in-toto "
            "vulns attestation (signed with --vsa-key) and list it in the VSA",
        ),
    )
    add_vex_options(verify)
    _register_verify_vsa(tree)


def _register_verify_vsa(tree: CommandTree) -> None:
    check = tree.command(
        "verify-vsa",
        help="Verify a verification summary attestation (the VSA spec's seven steps).",
        handler=_verify_vsa,
    )
    check.epilog = _VSA_EXAMPLE
    check.formatter_class = argparse.RawDescriptionHelpFormatter
    add_options(
        check,
        option("file", metavar="FILE", help="DSSE envelope holding the VSA"),
        list_option(
            "--subject-digest",
            required=True,
            metavar="ALG:HEX",
            dest="digests",
            help="a digest the VSA's subject must carry (every one given must be present)",
        ),
        option(
            "--verifier-id",
            required=True,
            metavar="URI",
            help="the verifier.id the VSA must name; --key must be trusted for it",
        ),
        list_option(
            "--key",
            default=[],
            metavar="PUB",
            help="public key(s) trusted to sign for --verifier-id (PEM or in-toto JSON)",
        ),
        option(
            "--certificate-identity",
            metavar="SAN",
            help="for a VSA in a Sigstore bundle: the certificate identity (SAN) trusted to sign "
            "for --verifier-id ('/regex/' matches the whole SAN); instead of --key",
        ),
        option(
            "--certificate-oidc-issuer",
            metavar="URL",
            help="the OIDC issuer of --certificate-identity's certificates",
        ),
        *TRUST,
        option(
            "--resource-uri",
            required=True,
            metavar="URI",
            help="the resourceUri the VSA must name exactly",
        ),
        list_option(
            "--level",
            default=[],
            metavar="LEVEL",
            help="a verifiedLevels value required (SLSA_BUILD_LEVEL_3 satisfies _2)",
        ),
        json_option("print the result as JSON"),
    )


def _dependency_checks(
    policy: Any, store_url: str | None, vex: list[Any]
) -> tuple[list[Any], list[Any]]:
    """The policy's `vulnerabilities:` rule as a dependency check over the store."""
    if policy.vulnerabilities is None:
        if vex:
            raise InputError("--vex", "applies to a policy with a vulnerabilities: rule")
        return [], []
    from assay.audit import VulnerabilityCheck
    from assay.audit.store_source import open_store_source
    from assay.config import default_store_url
    from assay.nvd.storage import store_exists

    url = store_url or default_store_url()
    if policy.vulnerabilities.attestations is not None and not store_exists(url):
        # A trusted scan attestation may stand for the scan: without a store, one must.
        return [VulnerabilityCheck(None, vex=vex)], []
    source = open_store_source(url)  # a missing store is refused, naming it
    return [VulnerabilityCheck(source, vex=vex)], [source]


def _vex_documents(args: argparse.Namespace, policy: Any) -> list[Any]:
    """`--vex` files, signed ones verified against the policy's signers or `--vex-key`."""
    if not args.vex:
        return []
    from assay._cli.scan_vex import (
        command_line_signers,
        policy_signers,
        read_vex_documents,
        vex_trust,
    )

    signers = [*policy_signers(policy.signers), *command_line_signers(args)]
    return read_vex_documents(args.vex, vex_trust(signers, args.trusted_root))


def _write_vulns(
    args: argparse.Namespace, report: VerificationReport, checks: list[Any], signer: Any
) -> list[tuple[str, dict[str, str]]]:
    """`--vulns-out`: the scan the rule performed, as a vulns attestation (its name and
    digest, for the VSA's inputAttestations)."""
    import hashlib

    from assay import __version__
    from assay._cli.attest_signing import write_output
    from assay.audit import vulns

    performed = next((c.performed for c in checks if c.performed is not None), None)
    if performed is None:
        print(
            "assay verify: no scan was performed (a scan attestation stood for it, or no "
            "artifact verified): --vulns-out was not written",
            file=sys.stderr,
        )
        return []
    statement = vulns.vulns_statement(
        [(r.artifact.name, r.artifact.digest) for r in report.artifacts],
        vulns.vulns_predicate(performed, version=__version__),
    )
    if signer is not None:
        from assay import dsse

        payload = json.dumps(statement, separators=(",", ":")).encode()
        envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [signer])
        data = json.dumps(envelope.to_dict(), indent=2).encode() + b"\n"
    else:
        data = json.dumps(statement, indent=2).encode() + b"\n"
    write_output(args.vulns_out, data)
    return [(args.vulns_out, {"sha256": hashlib.sha256(data).hexdigest()})]


def _verify(args: argparse.Namespace) -> int:
    from assay.policy import load_policy
    from assay.policy.parameters import parse_assignments
    from assay.verify import request

    _check_vsa_flags(args)
    policy = load_policy(args.policy, parse_assignments(args.param, "--param"))
    resource_uri = _resource_uri(args, policy)
    signer = _vsa_signer(args)
    artifacts = request.read_artifacts(args.artifacts, where="ARTIFACT")
    attestations = request.read_attestation_files(args.attestation)
    evidence = _evidence(args)
    if args.vulns_out and policy.vulnerabilities is None:
        raise InputError("--vulns-out", "applies to a policy with a vulnerabilities: rule")
    report, checks = _run_verifier(args, policy, artifacts, attestations, evidence)
    # Written before anything is printed: an unwritable output is an error (exit 2),
    # never reported after a verdict.
    scanned = _write_vulns(args, report, checks, signer) if args.vulns_out else []
    if args.vsa_out:
        _write_vsa(args, report, attestations, resource_uri, signer, scanned=scanned)
    _print_outcome(args, report)
    return EXIT_OK if report.passed else EXIT_FAILED


def _resource_uri(args: argparse.Namespace, policy: Any) -> str:
    """The VSA's resourceUri: --resource-uri, else the policy's; a VSA needs one."""
    resource_uri: str = args.resource_uri or policy.resource_uri or ""
    if args.vsa_out and not resource_uri:
        raise InputError(
            "--resource-uri", "a VSA needs a resource URI (flag or policy resourceUri)"
        )
    return resource_uri


def _print_outcome(args: argparse.Namespace, report: VerificationReport) -> None:
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, default=str) + "\n")
    else:
        _print_report(report)
    if report.transparency_log_waived:
        print(
            "WARNING: a Sigstore signature was accepted without its transparency-log entry "
            "(--insecure-ignore-tlog): nothing proves it was made while the certificate "
            "was valid",
            file=sys.stderr,
        )


def _evidence(args: argparse.Namespace) -> list[Attestation] | None:
    """The dependencies' evidence of `--attestation-dir` (None: no evidence was given)."""
    if not args.attestation_dir:
        return None
    from assay.verify import request

    return request.read_attestation_dir(args.attestation_dir, where="--attestation-dir")


def _check_vsa_flags(args: argparse.Namespace) -> None:
    if args.vsa_out and not args.verifier_id:
        raise InputError("--verifier-id", "required with --vsa-out")
    if (args.vsa_key or args.verifier_id) and not args.vsa_out:
        raise InputError("--vsa-out", "required with --vsa-key and --verifier-id")


def _vsa_signer(args: argparse.Namespace) -> Any:
    if not args.vsa_key:
        return None
    from assay.keys import MAX_PEM_BYTES, load_private_key

    return load_private_key(
        read_limited(args.vsa_key, MAX_PEM_BYTES),
        passphrase=read_passphrase(args.passphrase_env),
        where=args.vsa_key,
    )


def _run_verifier(
    args: argparse.Namespace,
    policy: Any,
    artifacts: list[Artifact],
    attestations: list[Attestation],
    evidence: list[Attestation] | None,
) -> tuple[VerificationReport, list[Any]]:
    """The Verifier's report, with the policy's dependency checks (and their sources
    closed once it is made)."""
    from assay.verify.verifier import Verifier

    trust = _sigstore_trust(args, policy, [*attestations, *(evidence or [])])
    checks, sources = _dependency_checks(policy, args.store, _vex_documents(args, policy))
    try:
        report = Verifier(
            policy=policy, evidence=evidence, dependency_checks=checks, trust=trust
        ).verify(artifacts, attestations)
    finally:
        for source in sources:
            source.close()
    return report, checks


def _sigstore_trust(args: argparse.Namespace, policy: Any, attestations: list[Any]) -> Any:
    """Trusted roots and the log rule for Sigstore signers (nothing is loaded unless the
    policy has an identity signer, or key signers and a bundle signed with a key)."""
    from assay.verify.certificates import SigstoreTrust

    if not _needs_sigstore(policy, attestations):
        return SigstoreTrust()
    verifier = bundle_verifier(args)
    return SigstoreTrust(
        roots=verifier.roots,
        insecure_ignore_tlog=args.insecure_ignore_tlog,
        rekor=rekor_lookup(args, verifier),
        verifier=verifier,
    )


def _needs_sigstore(policy: Any, attestations: list[Any]) -> bool:
    """Whether a policy signer is a Sigstore identity, or a key that signed a bundle."""
    identities = any(signer.identity is not None for signer in policy.signers)
    keyed = any(signer.keys for signer in policy.signers) and any(
        attestation.key_signed_bundle for attestation in attestations
    )
    return identities or keyed


def _line(check: Check) -> str:
    from assay.results import in_words

    mark = "PASS" if check.passed else "FAIL"
    about = f" [{check.subject}]" if check.subject is not None else ""
    detail = f" ({check.detail})" if check.detail else ""
    return (
        f"  {mark} {check.name}{about}: expected {in_words(check.expected)}, "
        f"found {in_words(check.found)}{detail}"
    )


def _print_report(report: VerificationReport) -> None:
    _print_checks(report)
    for artifact in report.artifacts:
        state = "PASSED" if artifact.passed else "FAILED"
        level = f" at SLSA build level {artifact.level}" if artifact.level is not None else ""
        print(f"{state}: {artifact.artifact.name}{level}", file=sys.stderr)
    if report.dependencies is not None:
        _print_dependencies(report.dependencies)
    print(
        "PASSED: verification passed" if report.passed else "FAILED: verification failed",
        file=sys.stderr,
    )


def _print_checks(report: VerificationReport) -> None:
    """Every check, under the attestation (or dependency check) that made it."""
    for heading, checks in _check_groups(report):
        if heading:
            print(f"{heading}:", file=sys.stderr)
        for check in checks:
            print(_line(check), file=sys.stderr)


def _check_groups(report: VerificationReport) -> list[tuple[str, list[Check]]]:
    """The report's checks by what made them: each attestation (named), the checks of
    the whole verification, of the dependencies' levels and of each dependency check."""
    groups = [(a.name, a.checks) for a in report.attestations]
    groups.append(("", report.extra_checks))
    if report.dependencies is not None:
        groups.append(("", report.dependencies.checks))
    groups += [(r.name, list(r.checks)) for r in report.dependency_checks]
    return groups


def _print_dependencies(dependencies: Any) -> None:
    levels = ", ".join(
        f"{count} at level {level}" for level, count in sorted(dependencies.levels.items())
    )
    print(f"dependencies: {levels or 'none'}", file=sys.stderr)
    if dependencies.missing:
        print(
            f"dependencies without evidence (counted at level 0): "
            f"{', '.join(dependencies.missing)}",
            file=sys.stderr,
        )


def _write_vsa(
    args: argparse.Namespace,
    report: VerificationReport,
    attestations: list[Attestation],
    resource_uri: str,
    signer: Any,
    *,
    scanned: list[tuple[str, dict[str, str]]],
) -> None:
    from assay import dsse
    from assay.verify import vsa

    seen: dict[str, dict[str, str]] = {}
    for attestation in attestations:
        seen.setdefault(attestation.file, attestation.digest)
    # What the dependency checks relied on (VEX that changed a finding, a scan
    # attestation), and the scan written by --vulns-out.
    for result in report.dependency_checks:
        for name, digest in result.input_attestations:
            seen.setdefault(name, dict(digest))
    for name, digest in scanned:
        seen.setdefault(name, digest)
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
            verified_levels=report.verified_levels,
        )
    )
    payload = vsa.serialize(statement)
    if signer is not None:
        envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, [signer])
        text = json.dumps(envelope.to_dict(), indent=2) + "\n"
    else:
        text = json.dumps(statement, indent=2) + "\n"
    write_output(args.vsa_out, text.encode("utf-8"))


def _verify_vsa(args: argparse.Namespace) -> int:
    from assay.attestation.files import read_file
    from assay.verify import vsa
    from assay.verify.inputs import read_attestations

    _check_vsa_trust_flags(args)
    keys = load_public_keys(args.key)
    attestations = read_attestations(read_file(args.file), args.file)
    if len(attestations) != 1:
        raise InputError(args.file, f"expected one VSA envelope, found {len(attestations)}")
    digests = _subject_digests(args.digests)
    attestation = attestations[0]
    if args.certificate_identity is not None and attestation.sigstore is not None:
        result = _keyless_vsa(args, attestation, digests)
    else:
        result = vsa.check_vsa(
            attestation.envelope,
            trusted={args.verifier_id: keys},
            subject_digests=digests,
            verifier_id=args.verifier_id,
            resource_uri=args.resource_uri,
            levels=args.level,
        )
    _print_vsa_result(args, result)
    return EXIT_OK if result.passed else EXIT_FAILED


def _print_vsa_result(args: argparse.Namespace, result: Any) -> None:
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, default=str) + "\n")
    else:
        for check in result.checks:
            print(_line(check), file=sys.stderr)
        print(
            "PASSED: VSA verified" if result.passed else "FAILED: VSA did not verify",
            file=sys.stderr,
        )


def _check_vsa_trust_flags(args: argparse.Namespace) -> None:
    if not args.key and not args.certificate_identity:
        raise InputError("--key", "expected --key or --certificate-identity (keyless)")
    if (args.certificate_identity is None) != (args.certificate_oidc_issuer is None):
        raise InputError(
            "--certificate-identity", "give --certificate-identity and --certificate-oidc-issuer"
        )


def _subject_digests(texts: list[str]) -> list[tuple[str, str]]:
    from assay.verify import vsa

    if not texts:
        raise InputError("--subject-digest", "expected at least one digest")
    digests = []
    for text in texts:
        try:
            digests.append(vsa.parse_digest(text))
        except InputError as error:
            raise InputError("--subject-digest", error.reason) from None
    return digests


def _keyless_vsa(args: argparse.Namespace, attestation: Any, digests: list[Any]) -> Any:
    """A VSA in a Sigstore bundle: the bundle verifies offline against the trusted roots
    and its certificate shows the trusted identity, then the VSA's steps 2-7 run as for
    a key-signed one (`accept_vsa`)."""
    from assay._cli.scan_vex import identity_matcher
    from assay.errors import AttestationError, VerificationError
    from assay.results import Check
    from assay.verify import vsa

    expected = f"{args.certificate_identity} ({args.certificate_oidc_issuer})"
    try:
        verified = bundle_verifier(args).verify(dict(attestation.sigstore), attestation.name)
    except (AttestationError, VerificationError) as error:
        found, problem, signed_for = None, str(error), []
    else:
        identity = verified.identity
        found = f"{identity.san} ({identity.issuer})"
        matches = identity_matcher(args.certificate_identity, args.certificate_oidc_issuer)
        ok = matches(identity)
        problem = "" if ok else "the certificate shows another identity"
        signed_for = [args.verifier_id] if ok else []
    result = vsa.accept_vsa(
        attestation.envelope,
        signed_for,
        subject_digests=digests,
        verifier_id=args.verifier_id,
        resource_uri=args.resource_uri,
        levels=args.level,
    )
    result.checks.insert(0, Check("signature.certificate", not problem, expected, found, problem))
    return result
