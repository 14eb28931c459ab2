"""`assay verify-artifact` (slsa-verifier's command) and `assay verify-bundle` (gh's).

Both turn their flags into a built-in policy, read files and format the library's typed
result: the verdict is `assay.verify.artifact.verify_artifacts`'s and
`assay.verify.bundle_check`'s, both run by `assay.verify.verifier.Verifier`. Heavy
modules are imported inside the handlers, so `assay --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree
from assay._cli._options import (
    JSON_REPORT,
    add_options,
    exclusive,
    json_option,
    list_option,
    option,
)
from assay._cli.verify_common import (
    ARTIFACTS,
    EXPECTATIONS,
    PRINT_PROVENANCE,
    TRUST,
    bundle_verifier,
    expectations,
    print_verdict,
    rekor_lookup,
)
from assay.errors import InputError

if TYPE_CHECKING:
    from assay.policy.gh_attestation import GhPolicy
    from assay.verify.bundle_check import BundleVerification
    from assay.verify.model import Artifact


def register(tree: CommandTree) -> None:
    register_artifact(tree)
    register_bundle(tree)


def register_artifact(tree: CommandTree) -> None:
    command = tree.command(
        "verify-artifact",
        help="Verify slsa-github-generator provenance of artifacts (slsa-verifier's command).",
        handler=_verify_artifact,
    )
    add_options(
        command,
        ARTIFACTS,
        option(
            "--provenance-path",
            required=True,
            metavar="FILE",
            help="the provenance: a Sigstore bundle or a .intoto.jsonl envelope",
        ),
        *EXPECTATIONS,
        *TRUST,
        option(
            "--insecure-ignore-tlog",
            action="store_true",
            help="accept legacy envelopes without a transparency-log entry (said in the report)",
        ),
        option(
            "--rekor-url",
            metavar="URL",
            help="look legacy envelopes up in this Rekor, online (e.g. https://rekor.sigstore.dev)",
        ),
        PRINT_PROVENANCE,
        JSON_REPORT,
    )


def _verify_artifact(args: argparse.Namespace) -> int:
    from assay.attestation.files import read_file
    from assay.verify import request
    from assay.verify.artifact import verify_artifacts

    artifacts = request.read_artifacts(args.artifacts, where="ARTIFACT")
    options = expectations(args)
    verifier = bundle_verifier(args)
    result = verify_artifacts(
        artifacts,
        read_file(args.provenance_path),
        args.provenance_path,
        options,
        verifier,
        insecure_ignore_tlog=args.insecure_ignore_tlog,
        rekor=rekor_lookup(args, verifier),
    )
    print_verdict(result, args)
    return EXIT_OK if result.passed else EXIT_FAILED


def register_bundle(tree: CommandTree) -> None:
    from assay._cli._fetching import FETCH

    command = tree.command(
        "verify-bundle",
        help="Verify an artifact's local Sigstore bundles as `gh attestation verify` does.",
        handler=_verify_bundle,
    )
    add_options(
        command,
        option(
            "artifact",
            metavar="ARTIFACT",
            help="file, a digest sha256:HEX, sha384:HEX or sha512:HEX, or oci://REGISTRY/REPOSITORY@sha256:HEX",
        ),
        exclusive(
            option(
                "--bundle",
                metavar="FILE",
                help="bundle(s): JSON or JSON lines (default: fetched from GitHub's attestations API)",
            ),
            option(
                "--bundle-from-oci",
                action="store_true",
                help="read the bundles attached to the oci:// image in its registry",
            ),
        ),
        exclusive(
            option("--owner", metavar="ORG", help="the GitHub organisation that built it"),
            option("--repo", metavar="ORG/REPO", help="the repository that built it"),
            required=True,
        ),
        exclusive(
            option("--cert-identity", metavar="SAN", help="the exact certificate SAN"),
            option("--cert-identity-regex", metavar="REGEX", help="a regex the SAN must match"),
            option("--signer-repo", metavar="ORG/REPO", help="repository of the signing workflow"),
            option(
                "--signer-workflow",
                metavar="PATH",
                help="the signing workflow (ORG/REPO/.github/workflows/X)",
            ),
        ),
        option("--cert-oidc-issuer", metavar="URL", help="expected OIDC issuer"),
        option("--signer-digest", metavar="SHA", help="digest of the signing workflow's commit"),
        option("--source-ref", metavar="REF", help="the source ref the build ran on"),
        option("--source-digest", metavar="SHA", help="the source commit the build ran on"),
        option("--predicate-type", metavar="URI", help="expected predicate type"),
        option(
            "--deny-self-hosted-runners",
            action="store_true",
            help="require the build to have run on a GitHub-hosted runner",
        ),
        option(
            "--hostname",
            default="github.com",
            metavar="HOST",
            help="the GitHub host the identities belong to (default github.com)",
        ),
        option(
            "--digest-alg",
            choices=("sha256", "sha512"),
            default="sha256",
            help="digest of a file ARTIFACT",
        ),
        list_option(
            "--custom-trusted-root",
            default=[],
            metavar="FILE",
            help="trust only these trusted_root.json files (JSON or JSON lines; repeatable)",
        ),
        option(
            "--limit",
            type=int,
            default=30,
            metavar="N",
            help="at most N attestations fetched from the API (default 30)",
        ),
        option(
            "--api-url",
            metavar="URL",
            help="GitHub's REST API (default: from --hostname, or $GITHUB_API_URL)",
        ),
        *FETCH,
        json_option("print the verification results as JSON"),
    )


def _bundles_from_api(args: argparse.Namespace, digest: tuple[str, str], owner: str) -> bytes:
    """The attestations GitHub holds for the digest, as JSON lines of bundles."""
    import json

    from assay._cli._fetching import api_for
    from assay.registry import github

    base = args.api_url or github.api_url(args.hostname)
    with api_for(args) as api:
        found = github.fetch_bundles(
            api,
            base,
            digest,
            owner=owner,
            repo=args.repo,
            limit=args.limit,
            predicate_type=args.predicate_type,
            api_token=github.token(),
        )
    if not found:
        raise InputError("ARTIFACT", f"no attestation found for {digest[0]}:{digest[1]} at {base}")
    return b"\n".join(json.dumps(bundle).encode() for _, bundle in found)


def _bundles_from_oci(args: argparse.Namespace, image: Any) -> bytes:
    """The bundles attached to the image in its registry, as JSON lines."""
    import json

    from assay._cli._fetching import source_for
    from assay.registry.attestations import image_attestations

    source, client = source_for(args)
    try:
        found = image_attestations(source, image)
    finally:
        if client is not None:
            client.close()
    if not found.attached:
        raise InputError("ARTIFACT", f"no Sigstore bundle is attached to oci://{image}")
    return b"\n".join(json.dumps(bundle).encode() for _, bundle in found.attached)


def _verify_bundle(args: argparse.Namespace) -> int:
    from assay.verify.bundle_check import verify_bundles

    artifact, image = _bundle_artifact(args)
    digest = _bundle_digest(args, artifact)
    policy = _gh_policy(args)
    args.trusted_root = args.custom_trusted_root
    args.only_trusted_roots = bool(args.custom_trusted_root)
    source, data = _bundle_source(args, image, digest, policy.owner)
    result = verify_bundles(
        artifact.name, digest, data, source, policy=policy, verifier=bundle_verifier(args)
    )
    if args.json:
        import json

        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(f"Loaded digest {digest[0]}:{digest[1]} for {artifact.name}", file=sys.stderr)
        print(f"Loaded {len(result.results)} attestation(s) from {source}", file=sys.stderr)
        print("The following policy criteria will be enforced:", file=sys.stderr)
        print("\n".join(policy.describe()), file=sys.stderr)
    if not result.passed:
        print(f"Verification failed: {_bundle_failure(result)}", file=sys.stderr)
        return EXIT_FAILED
    if not args.json:
        _print_verified(result)
    return EXIT_OK


def _bundle_digest(args: argparse.Namespace, artifact: Artifact) -> tuple[str, str]:
    """The artifact's digest by --digest-alg, else by the one algorithm it has."""
    algorithm = (
        args.digest_alg if args.digest_alg in artifact.digest else next(iter(artifact.digest))
    )
    return algorithm, artifact.digest[algorithm]


def _bundle_failure(result: BundleVerification) -> str:
    """Why no bundle verified: the first failed check, if any."""
    failures = [c for r in result.results for c in r.checks if not c.passed]
    return failures[0].summary() if failures else "no bundle verified"


def _bundle_artifact(args: argparse.Namespace) -> tuple[Artifact, Any]:
    """The artifact (a file, a digest, or an image by digest) and the image, if any."""
    if not args.artifact.startswith("oci://"):
        if args.bundle_from_oci:
            raise InputError("--bundle-from-oci", "expected an oci://IMAGE@sha256:HEX artifact")
        from assay.verify.request import read_artifact

        return read_artifact(args.artifact), None
    from assay.registry.reference import parse_reference
    from assay.verify.model import Artifact

    image = parse_reference(args.artifact.removeprefix("oci://"), "ARTIFACT")
    if image.digest is None:
        raise InputError("ARTIFACT", "expected oci://REGISTRY/REPOSITORY@sha256:HEX")
    return Artifact(str(image), {"sha256": image.digest.split(":", 1)[1]}), image


def _gh_owner(args: argparse.Namespace) -> str:
    """--owner, else the ORG of --repo ORG/REPO."""
    if args.owner is not None:
        return str(args.owner)
    if args.repo.count("/") != 1:
        raise InputError("--repo", f"expected ORG/REPO, got {args.repo!r}")
    return str(args.repo.split("/")[0])


def _gh_policy(args: argparse.Namespace) -> GhPolicy:
    """gh's flags as its built-in policy."""
    from assay.policy.gh_attestation import (
        DEFAULT_ISSUER,
        DEFAULT_PREDICATE_TYPE,
        GhPolicy,
        parse_regex,
    )

    regex = args.cert_identity_regex
    return GhPolicy(
        owner=_gh_owner(args),
        repo=args.repo,
        hostname=args.hostname,
        cert_identity=args.cert_identity,
        cert_identity_regex=parse_regex(regex, "--cert-identity-regex") if regex else None,
        signer_repo=args.signer_repo,
        signer_workflow=args.signer_workflow,
        oidc_issuer=args.cert_oidc_issuer or DEFAULT_ISSUER,
        signer_digest=args.signer_digest,
        source_ref=args.source_ref,
        source_digest=args.source_digest,
        predicate_type=args.predicate_type or DEFAULT_PREDICATE_TYPE,
        deny_self_hosted_runners=args.deny_self_hosted_runners,
    )


def _bundle_source(
    args: argparse.Namespace, image: Any, digest: tuple[str, str], owner: str
) -> tuple[str, bytes]:
    """Where the bundles come from (a file, the image's registry, GitHub's API), and them."""
    if args.bundle is not None:
        from assay.attestation.files import read_file

        return args.bundle, read_file(args.bundle)
    if image is not None and args.bundle_from_oci:
        return f"oci://{image}", _bundles_from_oci(args, image)
    return "GitHub's attestations API", _bundles_from_api(args, digest, owner)


def _print_verified(result: BundleVerification) -> None:
    print(
        f"✓ Verification succeeded! {len(result.verified)} attestation(s) verified",
        file=sys.stderr,
    )
    for item in result.verified:
        identity = item.signature.identity if item.signature else None
        repo = identity.source_repository_uri if identity else None
        workflow = identity.build_config_uri or identity.san if identity else None
        print(f"{repo}\t{item.predicate_type}\t{workflow}")
