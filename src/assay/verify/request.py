"""What a verification is asked about, parsed in one place for every command and page.

    digest = parse_digest("sha256:1a03…", where="ARTIFACT")       # ("sha256", "1a03…")
    artifact = read_artifact("dist/app.tar.gz")                    # a file, hashed
    artifacts = parse_digest_lines(form_text, where="artifact digests")
    attestations = read_attestation_files(["prov.intoto.jsonl"])
    evidence = read_attestation_dir("deps/")
    verifier = bundle_verifier(["my_root.json"], only=True)        # trusted roots

One rule for artifact digests: `ALG:HEX` with ALG one of `protocol.ARTIFACT_DIGESTS`
(sha256, sha384, sha512) and exactly that algorithm's number of hex digits, read in any
case and kept in lowercase. `assay verify`, `verify-artifact`, `verify-bundle`, the
package commands and the `/verify` page all call these functions, so an input one accepts
the others accept, and one they refuse is refused with the same message. Errors name the
input (`where`), never a command-line flag: the caller says what the input is called.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from assay import protocol
from assay.errors import InputError
from assay.verify.model import Artifact, Attestation

if TYPE_CHECKING:
    from assay.sigstore.verifier import BundleVerifier

MAX_ARTIFACTS: Final = 1000
MAX_ATTESTATION_FILES: Final = 10_000
MAX_DIRECTORY_DEPTH: Final = 16
DIGEST_FORM: Final = (
    "ALG:HEX with ALG "
    + ", ".join(protocol.ARTIFACT_DIGESTS[:-1])
    + (f" or {protocol.ARTIFACT_DIGESTS[-1]}")
)
_HEX: Final = re.compile(r"[0-9a-fA-F]*")
_ALGORITHM_LIKE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]*:")
"""What a digest argument starts with; a path that does not exist and does not look like
one is neither a file nor a digest."""


def parse_digest(text: str, *, where: str) -> tuple[str, str]:
    """`ALG:HEX` as (algorithm, lowercase hex), by the one rule every input follows."""
    algorithm, _, value = text.strip().partition(":")
    if algorithm not in protocol.ARTIFACT_DIGESTS:
        raise InputError(where, f"expected {DIGEST_FORM}, found {text.strip()[:80]!r}")
    length = protocol.DIGEST_HEX_LENGTHS[algorithm]
    if len(value) != length or not _HEX.fullmatch(value):
        found = f"{len(value)}" if _HEX.fullmatch(value) else f"{value[:80]!r}"
        raise InputError(where, f"expected {length} hex digits for {algorithm}, found {found}")
    return algorithm, value.lower()


def digest_artifact(text: str, *, where: str) -> Artifact:
    """An artifact known by its digest only, named by the digest as given."""
    algorithm, value = parse_digest(text, where=where)
    return Artifact(text.strip(), {algorithm: value})


def parse_digest_lines(text: str, *, where: str) -> tuple[Artifact, ...]:
    """One `ALG:HEX` per line (blank lines skipped), as artifacts."""
    result: list[Artifact] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            result.append(digest_artifact(line, where=f"{where} line {number}"))
        if len(result) > MAX_ARTIFACTS:
            raise InputError(where, f"expected at most {MAX_ARTIFACTS} digests")
    return tuple(result)


def read_artifact(text: str) -> Artifact:
    """A file (hashed with sha256 and sha512), or else a digest `ALG:HEX`; named by the
    text as given (`a/app` and `b/app` are two artifacts)."""
    path = Path(text)
    if not path.exists() and _ALGORITHM_LIKE.match(text):
        return digest_artifact(text, where=text)
    sha256, sha512 = hashlib.sha256(), hashlib.sha512()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                sha256.update(chunk)
                sha512.update(chunk)
    except OSError as error:
        raise InputError(
            text, f"expected an artifact file or a digest {DIGEST_FORM} ({error.strerror})"
        ) from None
    return Artifact(text, {"sha256": sha256.hexdigest(), "sha512": sha512.hexdigest()})


def read_artifacts(texts: Sequence[str], *, where: str) -> list[Artifact]:
    if len(texts) > MAX_ARTIFACTS:
        raise InputError(where, f"expected at most {MAX_ARTIFACTS} artifacts")
    return [read_artifact(text) for text in texts]


def read_attestation_files(paths: Iterable[str]) -> list[Attestation]:
    """Every envelope of the given attestation files (a file holding none is refused)."""
    from assay.attestation.files import read_file
    from assay.verify.inputs import read_attestations

    return [item for path in paths for item in read_attestations(read_file(path), path)]


def read_attestation_dir(directory: str, *, where: str) -> list[Attestation]:
    """Every attestation under `directory`; files that hold none are skipped (the
    folder may hold other files)."""
    from assay.attestation.files import read_file
    from assay.verify.inputs import read_attestations

    result = []
    for file in _files_under(directory, where=where):
        try:
            result.extend(read_attestations(read_file(file), str(file)))
        except InputError:
            continue
    return result


def _files_under(directory: str, *, where: str) -> list[Path]:
    root = Path(directory)
    if not root.is_dir():
        raise InputError(where, f"expected a directory, got {directory!r}")
    files = []
    for path in sorted(root.rglob("*")):
        if len(path.relative_to(root).parts) > MAX_DIRECTORY_DEPTH:
            raise InputError(
                str(path), f"expected at most {MAX_DIRECTORY_DEPTH} directory levels below DIR"
            )
        if path.is_file():
            files.append(path)
        if len(files) > MAX_ATTESTATION_FILES:
            raise InputError(directory, f"expected at most {MAX_ATTESTATION_FILES} files")
    return files


def parse_pairs(pairs: Iterable[str], *, where: str) -> tuple[tuple[str, str], ...]:
    """`K=V` items (workflow inputs) as pairs, in the order given."""
    result = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(where, f"expected K=V, got {pair!r}")
        result.append((key, value))
    return tuple(result)


_VERIFIERS: dict[tuple[tuple[str, str], ...], BundleVerifier] = {}


def bundle_verifier(trusted_roots: Sequence[str] = (), *, only: bool = False) -> BundleVerifier:
    """A bundle verifier for the shipped trusted roots plus `trusted_roots` (files), or
    those files alone with `only`; kept per process, as a command may run many times."""
    from assay.sigstore.roots import select_roots
    from assay.sigstore.verifier import BundleVerifier

    roots = select_roots(list(trusted_roots), replace=only)
    key = tuple((root.origin, root.sha256) for root in roots)
    if key not in _VERIFIERS:
        _VERIFIERS[key] = BundleVerifier(roots)
    return _VERIFIERS[key]
