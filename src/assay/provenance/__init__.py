"""Making SLSA provenance v1: subjects, dependencies, CI facts, the statement, signing.

    from assay import provenance
    subjects = provenance.file_subjects(["dist/widget.tar.gz"])  # inside the working dir
    source = provenance.read_git_source(".")                  # runs git
    statement = provenance.build_statement(
        subjects=subjects,
        builder_id="https://ci.example/builders/linux",
        build_type=provenance.COMMAND_BUILD_TYPE,
        external_parameters={"command": ["make", "dist"]},
        resolved_dependencies=[provenance.source_dependency(source)],
        invocation_id=provenance.new_invocation_id(),
    )
    payload = statement.to_json()                             # sign with assay.dsse.sign

Pure: `build_statement`, `parse_external_parameters`, `parse_dependency`,
`source_dependency`, `lockfile_dependencies`, `detect_ci` (environment mapping in,
`CiFacts` out), `git_uri`. I/O: `file_subjects`/`expand_globs` (read files),
`read_git_source` (runs git), `run_command` (runs the build).
"""

from __future__ import annotations

from assay.provenance.build import (
    COMMAND_BUILD_TYPE,
    MAX_DEPENDENCIES,
    build_statement,
    new_invocation_id,
    parse_external_parameters,
)
from assay.provenance.ci import CiFacts, detect_ci
from assay.provenance.dependencies import (
    lockfile_dependencies,
    parse_dependency,
    source_dependency,
)
from assay.provenance.git import read_git_source
from assay.provenance.run import CommandRun, run_command
from assay.provenance.source import SourceRevision, git_uri
from assay.provenance.subjects import MAX_SUBJECTS, expand_globs, file_subject, file_subjects

__all__ = [
    "COMMAND_BUILD_TYPE",
    "MAX_DEPENDENCIES",
    "MAX_SUBJECTS",
    "CiFacts",
    "CommandRun",
    "SourceRevision",
    "build_statement",
    "detect_ci",
    "expand_globs",
    "file_subject",
    "file_subjects",
    "git_uri",
    "lockfile_dependencies",
    "new_invocation_id",
    "parse_dependency",
    "parse_external_parameters",
    "read_git_source",
    "run_command",
    "source_dependency",
]
