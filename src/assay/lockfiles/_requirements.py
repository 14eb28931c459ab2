"""Pinned requirements files and `pip freeze` output (pip's requirements-file syntax)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from assay.lockfiles._digests import parse_pip_hash
from assay.lockfiles._model import (
    MAX_LINE_CHARS,
    LockedFile,
    LockedPackage,
    LockFile,
    LockfileError,
    SkippedEntry,
    UnpinnedRequirement,
)
from assay.lockfiles._purl import pypi_package

_COMMENT = re.compile(r"(^|\s+)#.*$")

# Options that apply to the whole file and pin nothing (pip's global options).
_GLOBAL_OPTIONS = frozenset(
    {
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--no-index",
        "--trusted-host",
        "--pre",
        "--prefer-binary",
        "--require-hashes",
        "--only-binary",
        "--no-binary",
        "--use-feature",
    }
)
_INCLUDES = frozenset({"-r", "--requirement", "-c", "--constraint"})
_EDITABLE = frozenset({"-e", "--editable"})
_SKIPPED_OPTIONS = (
    (_INCLUDES, "includes another file: read that file as well"),
    (_EDITABLE, "an editable install, not a pinned release"),
)
# Options a requirement line may carry after the requirement, besides --hash.
_PER_REQUIREMENT = frozenset({"--config-settings", "--global-option", "--install-option"})


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined and comments removed."""
    pending: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if line.endswith("\\") and not line.lstrip().startswith("#"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        yield start, _COMMENT.sub("", " ".join(pending)).strip()
        pending = []
    if pending:
        yield start, _COMMENT.sub("", " ".join(pending)).strip()


def _option_name(token: str) -> str:
    return token.split("=", 1)[0]


def _option_line(line: str, filename: str, position: str) -> list[SkippedEntry]:
    """A pip option line: a global option read past, an include or an editable install
    skipped with the reason; any other option refused."""
    option = _option_name(line.split(None, 1)[0])
    if option in _GLOBAL_OPTIONS:
        return []
    for names, reason in _SKIPPED_OPTIONS:
        if option in names:
            return [SkippedEntry(position, line, reason)]
    raise LockfileError(
        filename, position, f"expected a requirement or a pip option, found {option!r}"
    )


def read_requirements(text: str, filename: str) -> LockFile:
    """Every pinned `name==version` line, with its `--hash` digests; lines that name a
    package without one version are kept in `unpinned`."""
    packages: list[LockedPackage] = []
    skipped: list[SkippedEntry] = []
    unpinned: list[UnpinnedRequirement] = []
    for number, line in _logical_lines(text):
        if not line:
            continue
        position = f"line {number}"
        if len(line) > MAX_LINE_CHARS:
            raise LockfileError(
                filename, position, f"expected a line of at most {MAX_LINE_CHARS} characters"
            )
        if line.startswith("-"):
            skipped.extend(_option_line(line, filename, position))
            continue
        entry = _requirement(line, filename, position)
        if isinstance(entry, SkippedEntry):
            skipped.append(entry)
        elif isinstance(entry, UnpinnedRequirement):
            unpinned.append(entry)
        else:
            packages.append(entry)
    return LockFile(
        filename=filename,
        format="requirements",
        packages=tuple(packages),
        skipped=tuple(skipped),
        unpinned=tuple(unpinned),
    )


def _is_path_or_url(spec: str) -> bool:
    # A URL without `name @`: pip's direct reference names the project before the URL.
    return spec.startswith((".", "/")) or ("://" in spec and "@" not in spec)


def _parse(spec: str, filename: str, position: str) -> Requirement:
    try:
        return Requirement(spec)
    except InvalidRequirement as error:
        message = str(error).splitlines()[0]
        raise LockfileError(
            filename, position, f"expected a requirement (name==version), found {spec!r}: {message}"
        ) from None


def _pinned_version(requirement: Requirement) -> str | None:
    """The one version `==` (or `===`) pins, None when the requirement pins none."""
    specifiers = list(requirement.specifier)
    if len(specifiers) != 1 or specifiers[0].operator not in ("==", "==="):
        return None
    version = specifiers[0].version
    return version if version and not version.endswith(".*") else None


def _requirement(
    line: str, filename: str, position: str
) -> LockedPackage | SkippedEntry | UnpinnedRequirement:
    spec, options = _split_options(line)
    hashes = _hashes(options, filename, position)
    if _is_path_or_url(spec):
        return SkippedEntry(position, line, "a path or URL, not a pinned release")
    requirement = _parse(spec, filename, position)
    if requirement.url:
        return SkippedEntry(
            position, line, f"a direct reference ({requirement.url}), not a release"
        )
    version = _pinned_version(requirement)
    name = canonicalize_name(requirement.name)
    if version is None:
        return UnpinnedRequirement(
            name=name,
            specifier=str(requirement.specifier),
            purl=f"pkg:pypi/{name}",
            location=position,
            ecosystem="pypi",
        )
    files = tuple(LockedFile(digests={algorithm: value}) for algorithm, value in hashes)
    return pypi_package(requirement.name, version, files, position, index_url=None)


def _split_options(line: str) -> tuple[str, list[str]]:
    """A requirement line's requirement and its options: as pip reads it, the requirement
    runs up to the first token that is an option."""
    tokens = line.split(" ")
    cut = next((i for i, t in enumerate(tokens) if t.startswith("-")), len(tokens))
    return " ".join(tokens[:cut]).strip(), [t for t in tokens[cut:] if t]


def _hashes(options: list[str], filename: str, position: str) -> list[tuple[str, str]]:
    hashes: list[tuple[str, str]] = []
    tokens = iter(options)
    for token in tokens:
        name, sep, value = token.partition("=")
        if not sep and name in ("--hash", *_PER_REQUIREMENT):
            value = next(tokens, "")  # the option's value is the next token
        if name == "--hash":
            hashes.append(_hash(value, filename, position))
        elif name not in _PER_REQUIREMENT:
            raise LockfileError(
                filename,
                position,
                f"expected --hash=ALGORITHM:HEX after the requirement, found {token!r}",
            )
    return hashes


def _hash(value: str, filename: str, position: str) -> tuple[str, str]:
    """One `--hash` value (ALGORITHM:HEX) as (algorithm, digest)."""
    try:
        return parse_pip_hash(value)
    except ValueError as error:
        raise LockfileError(filename, position, f"--hash: {error}") from None
