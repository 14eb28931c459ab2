"""Subjects: the files a build produced, named and digested (reads files, nothing else)."""

from __future__ import annotations

import glob
import hashlib
import os
from pathlib import Path

from assay.attestation import ResourceDescriptor
from assay.errors import InputError

MAX_SUBJECTS = 10_000
"""Most subjects one statement may name (the verifier reads no more)."""


def file_subject(
    path: Path, *, name: str | None = None, where: str = "--subject"
) -> ResourceDescriptor:
    """A subject for one file: its name as given (POSIX separators) and its SHA-256."""
    try:
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except IsADirectoryError:
        raise InputError(where, f"expected a file, found the directory {path}") from None
    except OSError as error:
        raise InputError(where, f"cannot read {path}: {error.strerror}") from None
    return ResourceDescriptor(name=name or path.as_posix(), digest={"sha256": digest})


def file_subjects(
    paths: list[str],
    *,
    where: str = "--subject",
    root: Path | None = None,
    allow_outside: bool = False,
) -> list[ResourceDescriptor]:
    """One subject per distinct path, in the order given.

    Each file must lie inside `root` (default: the working directory) once its symlinks
    are resolved: a build's outputs are its own, and `../secret` or a link to
    `/etc/passwd` would put another file's digest under a build's name. `allow_outside`
    accepts them.
    """
    base = (root or Path.cwd()).resolve()
    seen: set[str] = set()
    subjects: list[ResourceDescriptor] = []
    for text in paths:
        name = Path(os.path.normpath(text)).as_posix()
        if name in seen:
            continue
        seen.add(name)
        if not allow_outside:
            _check_inside(Path(text), base, where)
        subjects.append(file_subject(Path(text), name=name, where=where))
    _check_count(len(subjects), where)
    return subjects


def _check_inside(path: Path, base: Path, where: str) -> None:
    resolved = (base / path).resolve()  # symlinks followed; a missing file stays as named
    if not resolved.is_relative_to(base):
        via = "" if resolved == (base / path).absolute() else f" (it resolves to {resolved})"
        raise InputError(
            where,
            f"{path}: expected a file inside the working directory {base}, found one "
            f"outside the working directory{via}",
        )


def _files_matching(pattern: str, base: Path) -> list[str]:
    """The files (not directories) a glob names below `base`, sorted."""
    names = glob.glob(pattern, root_dir=base, recursive=True)
    return sorted(name for name in names if (base / name).is_file())


def expand_globs(
    patterns: list[str], *, root: Path | None = None, where: str = "--subject"
) -> list[str]:
    """The files each glob names (`**` recursive, relative to `root`), sorted per pattern.

    A pattern that matches no file is an error: a build that did not produce what it was
    expected to produce must not get provenance for less.
    """
    base = root or Path.cwd()
    found: list[str] = []
    for pattern in patterns:
        matches = _files_matching(pattern, base)
        if not matches:
            raise InputError(where, f"expected files matching {pattern!r}, found none")
        found.extend(m for m in matches if m not in found)
        _check_count(len(found), where)
    return found


def _check_count(count: int, where: str) -> None:
    if count > MAX_SUBJECTS:
        raise InputError(where, f"expected at most {MAX_SUBJECTS} subjects, found {count}")
