"""`assay verify-npm-package` (slsa-verifier's command) and `assay verify-pypi`: a
package's attestations read from its registry (or a file, or the cache), verified by
the library (`assay.registry.npm`, `assay.registry.pypi`); this module only reads
flags and formats.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree
from assay._cli import verify_common as common
from assay._cli._options import JSON_REPORT, add_options, exclusive, option
from assay.errors import InputError


def register(tree: CommandTree) -> None:
    from assay._cli._fetching import FETCH

    npm = tree.command(
        "verify-npm-package",
        help="Verify an npm package's provenance and publish attestation (slsa-verifier's).",
        handler=_verify_npm,
    )
    add_options(
        npm,
        option("tarball", metavar="TARBALL", help="the package tarball, or sha512:HEX"),
        option(
            "--source-uri",
            required=True,
            metavar="URI",
            help="expected source: github.com/ORG/REPO",
        ),
        option("--package-name", metavar="NAME", help="expected package name"),
        option("--package-version", metavar="VERSION", help="expected package version"),
        option("--builder-id", metavar="ID", help="expected builder id (name[@ref])"),
        exclusive(
            option(
                "--attestations-path",
                metavar="FILE",
                help="npm's attestations document, read locally",
            ),
            option(
                "--registry",
                metavar="URL",
                help="the registry to fetch attestations from (default https://registry.npmjs.org)",
            ),
        ),
        *common.TRUST,
        *FETCH,
        JSON_REPORT,
    )
    pypi = tree.command(
        "verify-pypi",
        help="Verify PEP 740 attestations of PyPI distributions against their Trusted Publisher.",
        handler=_verify_pypi,
    )
    add_options(
        pypi,
        option("dist", metavar="DIST_FILE|NAME==VERSION", help="a distribution file, or a release"),
        option(
            "--repository",
            required=True,
            metavar="ORG/REPO",
            help="the Trusted Publisher's repository (GitHub ORG/REPO or GitLab GROUP/PROJECT)",
        ),
        option(
            "--workflow", metavar="PATH", help="the publisher's workflow file (e.g. release.yml)"
        ),
        option(
            "--provenance", metavar="FILE", help="the provenance (or one attestation), read locally"
        ),
        option(
            "--index-url",
            metavar="URL",
            help="the index serving the Integrity and JSON APIs (default https://pypi.org)",
        ),
        *common.TRUST,
        *FETCH,
        JSON_REPORT,
    )


def _verify_npm(args: argparse.Namespace) -> int:
    from assay.registry.npm import NpmOptions, registry_keys, verify_npm_package
    from assay.verify.request import read_artifact

    artifact = read_artifact(args.tarball)
    if "sha512" not in artifact.digest:
        raise InputError("TARBALL", "expected the tarball or its sha512:HEX (npm's integrity)")
    options = NpmOptions(
        source_uri=args.source_uri,
        package_name=args.package_name,
        package_version=args.package_version,
        builder_id=args.builder_id,
    )
    where, data = _npm_attestations(args)
    result = verify_npm_package(
        artifact.name,
        artifact.digest["sha512"],
        data,
        where,
        options,
        common.bundle_verifier(args),
        registry_keys(),
    )
    if args.json:
        import json

        print(json.dumps(result.to_dict(), indent=2))
    if result.passed:
        print(f'Verified build using builder "{args.builder_id}"', file=sys.stderr)
        print("PASSED: SLSA verification passed", file=sys.stderr)
        return EXIT_OK
    print(f"FAILED: SLSA verification failed: {result.failures()[0].summary()}", file=sys.stderr)
    return EXIT_FAILED


def _npm_attestations(args: argparse.Namespace) -> tuple[str, bytes]:
    """Where npm's attestations document comes from (a file, or the registry for the
    package named by the flags or the tarball), and it."""
    if args.attestations_path:
        from assay.attestation.files import read_file

        return args.attestations_path, read_file(args.attestations_path)
    from assay._cli._fetching import api_for
    from assay.registry.npm import DEFAULT_REGISTRY, attestations_url

    name, version = _npm_package(args)
    where = attestations_url(args.registry or DEFAULT_REGISTRY, name, version)
    with api_for(args) as api:
        return where, api.get(where)[0]


def _npm_package(args: argparse.Namespace) -> tuple[str, str]:
    """The package's name and version: the flags', else the tarball's package.json."""
    name, version = args.package_name, args.package_version
    if (name is None or version is None) and Path(args.tarball).is_file():
        name, version = _completed_from_tarball(args.tarball, name, version)
    if name is None or version is None:
        raise InputError(
            "--package-name/--package-version",
            "expected both (or the tarball) to fetch the attestations",
        )
    return name, version


def _completed_from_tarball(tarball: str, name: str | None, version: str | None) -> tuple[str, str]:
    """The name and version given, each missing one read from the tarball's package.json."""
    from assay._bounded import read_bounded
    from assay.registry.npm import tarball_package

    found = tarball_package(read_bounded(tarball, 256 * 1024 * 1024), tarball)
    return name or found[0], version or found[1]


def _verify_pypi(args: argparse.Namespace) -> int:
    from assay.registry.pypi import DEFAULT_INDEX, PypiOptions

    name, version, files, documents = _pypi_target(args)
    verifier = common.bundle_verifier(args)
    from assay._cli._fetching import api_for

    with api_for(args) as api:
        results = _PypiRun(
            api, args.index_url or DEFAULT_INDEX, PypiOptions(args.repository, args.workflow)
        ).verify(name, version, files, documents, verifier)
    passed = all(r.passed for r in results)
    if args.json:
        import json

        distributions = [r.to_dict() for r in results]
        print(json.dumps({"passed": passed, "distributions": distributions}, indent=2))
    for result in results:
        print(_pypi_line(result), file=sys.stderr)
    return EXIT_OK if passed else EXIT_FAILED


_Documents = dict[str, tuple[str, bytes]]


def _pypi_target(
    args: argparse.Namespace,
) -> tuple[str, str, list[tuple[str, str]], _Documents]:
    """The project and version, its files (a given file: with its sha256) and the
    provenance given for them."""
    import hashlib

    from assay._bounded import read_bounded
    from assay.attestation.files import read_file
    from assay.registry.pypi import name_and_version

    path = Path(args.dist)
    if path.is_file():
        data = read_bounded(path, 1024 * 1024 * 1024)
        name, version = name_and_version(path.name)
        documents: _Documents = {}
        if args.provenance:
            documents[path.name] = (args.provenance, read_file(args.provenance))
        return name, version, [(path.name, hashlib.sha256(data).hexdigest())], documents
    name, sep, version = args.dist.partition("==")
    if not sep or not name or not version:
        raise InputError(
            "DIST_FILE|NAME==VERSION", f"expected a file or NAME==VERSION, got {args.dist!r}"
        )
    if args.provenance:
        raise InputError("--provenance", "expected a distribution file with it, not NAME==VERSION")
    return name, version, [], {}


class _PypiRun:
    """Each file's provenance, given or fetched from the index, verified."""

    def __init__(self, api: Any, index: str, options: Any) -> None:
        self.api, self.index, self.options = api, index, options

    def verify(
        self,
        name: str,
        version: str,
        files: list[tuple[str, str]],
        documents: _Documents,
        verifier: Any,
    ) -> list[Any]:
        from assay.registry.pypi import release_files, release_url, verify_distribution

        if not files:
            url = release_url(self.index, name, version)
            files = release_files(self.api.get(url)[0], url)
        results = []
        for filename, sha256 in files:
            where, provenance = documents.get(filename) or self._fetch(name, version, filename)
            results.append(
                verify_distribution(filename, sha256, provenance, where, self.options, verifier)
                if provenance is not None
                else self._missing(filename, sha256, where)
            )
        return results

    def _fetch(self, name: str, version: str, filename: str) -> tuple[str, bytes | None]:
        from assay.errors import RegistryError
        from assay.registry.pypi import provenance_url

        where = provenance_url(self.index, name, version, filename)
        try:
            return where, self.api.get(where)[0]
        except RegistryError as error:
            if not error.reason.startswith("HTTP 404"):
                raise
            return where, None

    @staticmethod
    def _missing(filename: str, sha256: str, where: str) -> Any:
        # PyPI has no provenance for this file: it fails, it is not unusable.
        from assay.registry.pypi import DistributionVerification

        return DistributionVerification(filename, sha256, where)


def _pypi_line(result: Any) -> str:
    if result.passed:
        return f"OK: {result.filename}: {len(result.attestations)} attestation(s) verified"
    failures = result.failures()
    reason = failures[0].summary() if failures else f"no attestation ({result.source}: not found)"
    return f"FAILED: {result.filename}: {reason}"
