"""`assay verify-image` (slsa-verifier's command, attestations read from the registry)
and `assay fetch` (evidence downloaded for a later air-gapped verification).

The verdict is `assay.registry.image.verify_image`'s; this module reads flags, picks
where attestations come from (the registry, keeping what it fetches in the cache; the
cache only with `--offline`; a directory with `--attestation-dir`) and formats. Heavy
modules are imported inside the handlers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree
from assay._cli._options import JSON_REPORT, add_options, json_option, option
from assay.errors import InputError


def register(tree: CommandTree) -> None:
    from assay._cli._fetching import FETCH, TIMEOUT
    from assay._cli.verify_common import EXPECTATIONS, PRINT_PROVENANCE, TRUST

    command = tree.command(
        "verify-image",
        help="Verify an image's provenance attached in its registry (slsa-verifier's command).",
        handler=_verify_image,
    )
    add_options(
        command,
        option("image", metavar="IMAGE", help="REGISTRY/REPOSITORY@sha256:HEX"),
        *EXPECTATIONS,
        option(
            "--provenance-path",
            metavar="FILE",
            help="Cloud Build: gcloud's --show-provenance output for the image (read locally)",
        ),
        *TRUST,
        *FETCH,
        PRINT_PROVENANCE,
        JSON_REPORT,
    )
    fetch = tree.command(
        "fetch",
        help="Download the attestations of images for a later offline verification.",
        handler=_fetch,
    )
    add_options(
        fetch,
        option(
            "refs",
            nargs="+",
            metavar="REF",
            help=(
                "an image REGISTRY/REPOSITORY@sha256:HEX, npm:NAME@VERSION, pypi:NAME==VERSION"
                " or github:OWNER/REPO@sha256:HEX"
            ),
        ),
        option("--registry", metavar="URL", help="npm's registry (default npm's)"),
        option("--index-url", metavar="URL", help="PyPI's index (default pypi.org)"),
        option(
            "--api-url",
            metavar="URL",
            help="GitHub's API (default api.github.com, $GITHUB_API_URL)",
        ),
        option(
            "--out", required=True, metavar="DIR", help="where to keep them (--attestation-dir DIR)"
        ),
        TIMEOUT,
        json_option("print what was fetched as JSON"),
    )


def _verify_image(args: argparse.Namespace) -> int:
    from assay._cli.verify_common import bundle_verifier, expectations
    from assay.registry.image import verify_image
    from assay.registry.reference import parse_reference

    reference = parse_reference(args.image)
    options = expectations(args, image=True)
    if args.provenance_path:
        return _verify_cloud_build(args, reference, options)
    from assay._cli._fetching import source_for

    source, client = source_for(args)
    try:
        verdict = verify_image(source, reference, options, bundle_verifier(args))
    finally:
        if client is not None:
            client.close()
    if args.json:
        import json

        print(json.dumps(verdict.to_dict(), indent=2))
    if verdict.result is None:
        print(f"FAILED: SLSA verification failed: {reference}: {verdict.reason}", file=sys.stderr)
        return EXIT_FAILED
    from assay._cli.verify_common import print_verdict

    args.json = False  # printed above, with the image
    print_verdict(verdict.result, args)
    return EXIT_OK if verdict.passed else EXIT_FAILED


def _fetch(args: argparse.Namespace) -> int:
    from assay.registry.api import ApiClient
    from assay.registry.cache import Cache, CachingClient
    from assay.registry.client import RegistryClient

    cache = Cache(Path(args.out))
    report = []
    with (
        RegistryClient(timeout=args.timeout) as client,
        ApiClient(cache=cache, timeout=args.timeout) as api,
    ):
        source = CachingClient(client, cache)
        for text in args.refs:
            kind, _, rest = text.partition(":")
            fetch = _PACKAGE_FETCHERS.get(kind)
            report.append(_fetch_image(source, text) if fetch is None else fetch(api, rest, args))
    if args.json:
        import json

        print(json.dumps({"out": str(args.out), "fetched": report}, indent=2))
    else:
        for item in report:
            print(f"{item['ref']}\t{item['documents']} document(s)")
    return EXIT_OK


def _fetch_image(source: Any, text: str) -> dict[str, Any]:
    from assay.registry.attestations import image_attestations
    from assay.registry.reference import parse_reference

    found = image_attestations(source, parse_reference(text, "REF"))
    return {
        "ref": text,
        "digest": found.digest,
        "attestations": len(found.bundles) + len(found.key_signed),
        "sources": found.sources,
        "documents": len(found.fetched),
    }


def _fetch_npm(api: Any, spec: str, args: argparse.Namespace) -> dict[str, Any]:
    from assay.registry.npm import DEFAULT_REGISTRY, attestations_url

    name, _, version = spec.rpartition("@")  # (no "@": no name)
    if not name or not version:
        raise InputError("REF", f"expected npm:NAME@VERSION, got npm:{spec!r}")
    url = attestations_url(args.registry or DEFAULT_REGISTRY, name, version)
    api.get(url)
    return {"ref": f"npm:{spec}", "urls": [url], "documents": 1}


def _fetch_pypi(api: Any, spec: str, args: argparse.Namespace) -> dict[str, Any]:
    from assay.registry.pypi import DEFAULT_INDEX, provenance_url, release_files, release_url

    name, _, version = spec.partition("==")  # (no "==": no version)
    if not name or not version:
        raise InputError("REF", f"expected pypi:NAME==VERSION, got pypi:{spec!r}")
    index = args.index_url or DEFAULT_INDEX
    url = release_url(index, name, version)
    urls = [url]
    for filename, _ in release_files(api.get(url)[0], url):
        urls.append(provenance_url(index, name, version, filename))
        api.get(urls[-1])
    return {"ref": f"pypi:{spec}", "urls": urls, "documents": len(urls)}


def _fetch_github(api: Any, spec: str, args: argparse.Namespace) -> dict[str, Any]:
    from assay.registry import github
    from assay.registry.reference import DIGEST

    repo, _, digest = spec.partition("@")  # (no "@": no digest)
    if repo.count("/") != 1 or not DIGEST.match(digest):
        raise InputError("REF", f"expected github:OWNER/REPO@sha256:HEX, got github:{spec!r}")
    base = args.api_url or github.api_url()
    found = github.fetch_bundles(
        api,
        base,
        ("sha256", digest.split(":", 1)[1]),
        owner=repo.split("/")[0],
        repo=repo,
        api_token=github.token(),
    )
    return {"ref": f"github:{spec}", "attestations": len(found), "documents": len(found)}


# `assay fetch`'s package references (KIND:SPEC) and what fetches each; others are images.
_PACKAGE_FETCHERS: dict[str, Callable[[Any, str, argparse.Namespace], dict[str, Any]]] = {
    "npm": _fetch_npm,
    "pypi": _fetch_pypi,
    "github": _fetch_github,
}


def _verify_cloud_build(args: argparse.Namespace, reference: Any, options: Any) -> int:
    from assay.attestation.files import read_file
    from assay.registry.cloudbuild import verify_cloud_build

    report = verify_cloud_build(
        reference, read_file(args.provenance_path), args.provenance_path, options
    )
    if args.json:
        import json

        print(json.dumps(report.to_dict(), indent=2))
    if report.passed:
        print("PASSED: SLSA verification passed", file=sys.stderr)
        return EXIT_OK
    failures = report.failures()
    reason = failures[0].summary() if failures else "no attestation covers the image"
    print(f"FAILED: SLSA verification failed: {reason}", file=sys.stderr)
    return EXIT_FAILED
