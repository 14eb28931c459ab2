"""What the verify commands share: the trusted-roots and slsa-verifier's expectation flags,
the roots and Rekor they name, the flags as slsa-verifier's `Options`, and the verdict
printed as slsa-verifier prints it (`verify-artifact`, `verify-image`, `verify-npm-package`,
`verify-pypi`)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from assay._cli._options import Argument, exclusive, list_option, option

if TYPE_CHECKING:
    from assay.policy.slsa_github import Options
    from assay.sigstore.signature import RekorLookup
    from assay.sigstore.verifier import BundleVerifier
    from assay.verify.artifact import ArtifactVerification


ARTIFACTS = option(
    "artifacts",
    nargs="+",
    metavar="ARTIFACT",
    help="artifact file, or a digest sha256:HEX, sha384:HEX or sha512:HEX",
)
"""ARTIFACT...: files or digests (`assay verify`, `verify-artifact`)."""

TRUST: tuple[Argument, ...] = (
    list_option(
        "--trusted-root",
        default=[],
        metavar="FILE",
        help="a Sigstore trusted_root.json to trust besides the shipped ones (repeatable)",
    ),
    option(
        "--only-trusted-roots",
        action="store_true",
        help="trust only the --trusted-root files, not the shipped roots",
    ),
)
"""`--trusted-root` (repeatable) and `--only-trusted-roots`."""

PRINT_PROVENANCE = option(
    "--print-provenance", action="store_true", help="print the verified statement on stdout"
)

EXPECTATIONS: tuple[Argument, ...] = (
    option(
        "--source-uri", required=True, metavar="URI", help="expected source: github.com/ORG/REPO"
    ),
    exclusive(
        option("--source-tag", metavar="TAG", help="expected tag"),
        option(
            "--source-versioned-tag", metavar="vX[.Y[.Z]]", help="expected semantic version tag"
        ),
        option("--source-branch", metavar="BRANCH", help="expected branch"),
    ),
    option("--builder-id", metavar="ID", help="expected builder id (name[@ref])"),
    list_option(
        "--build-workflow-input",
        default=[],
        metavar="K=V",
        help="expected workflow_dispatch input (repeatable)",
    ),
)
"""slsa-verifier's expectations: the source, one of its refs, the builder and the
workflow inputs (`verify-artifact`, `verify-image`)."""


def expectations(args: argparse.Namespace, *, image: bool = False) -> Options:
    """`EXPECTATIONS`' flags as slsa-verifier's options."""
    from assay.policy.slsa_github import Options
    from assay.verify.request import parse_pairs

    return Options(
        source_uri=args.source_uri,
        source_branch=args.source_branch,
        source_tag=args.source_tag,
        source_versioned_tag=args.source_versioned_tag,
        builder_id=args.builder_id,
        workflow_inputs=parse_pairs(args.build_workflow_input, where="--build-workflow-input"),
        image=image,
    )


def bundle_verifier(args: argparse.Namespace) -> BundleVerifier:
    """The bundle verifier for `TRUST`' roots."""
    from assay.verify.request import bundle_verifier

    return bundle_verifier(args.trusted_root, only=args.only_trusted_roots)


def rekor_lookup(args: argparse.Namespace, verifier: BundleVerifier) -> RekorLookup | None:
    """The Rekor `--rekor-url` names, unless `--insecure-ignore-tlog` waives the log."""
    if not args.rekor_url or args.insecure_ignore_tlog:
        return None
    from assay.sigstore.rekor import RekorClient

    return RekorClient(args.rekor_url, verifier.roots).lookup


def _print_output(result: ArtifactVerification, args: argparse.Namespace) -> None:
    """What stdout receives: the report with --json, else the verified statements with
    --print-provenance (only when the verification passed)."""
    if args.json:
        import json

        print(json.dumps(result.to_dict(), indent=2))
    elif args.print_provenance and result.passed:
        for statement in result.statements:
            sys.stdout.write(statement.decode("utf-8", "replace") + "\n")


def print_verdict(result: ArtifactVerification, args: argparse.Namespace) -> None:
    """slsa-verifier's verdict lines (and the report or the statements, when asked)."""
    from assay.policy.slsa_github import TESTING_ENV, testing_mode

    if testing_mode():
        print(f"WARNING: Insecure {TESTING_ENV} is enabled.", file=sys.stderr)
    _print_output(result, args)
    if result.tlog_waived:
        print(
            "WARNING: no transparency-log entry was checked (--insecure-ignore-tlog): "
            "nothing proves the signature was made while the certificate was valid",
            file=sys.stderr,
        )
    if result.passed:
        print(
            f'Verified build using builder "{result.builder_id}" at commit {result.commit}',
            file=sys.stderr,
        )
        print("PASSED: SLSA verification passed", file=sys.stderr)
        return
    failures = result.failures()
    reason = (
        failures[0].summary()
        if failures
        else "no verified provenance names the artifact as a subject"
    )
    print(f"FAILED: SLSA verification failed: {reason}", file=sys.stderr)
