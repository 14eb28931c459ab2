"""`assay attest provenance` and `assay attest run`: make SLSA provenance v1, signed or not.

Only argparse is imported at start-up; each handler imports the library it uses.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from assay._cli import EXIT_FAILED, EXIT_OK, CommandTree
from assay._cli._options import add_options, list_option, option

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Sequence
    from pathlib import Path

    from assay.attestation import ResourceDescriptor, Statement
    from assay.provenance import CiFacts, SourceRevision

_PROVENANCE_EXAMPLE = """\
example:
  assay attest provenance --subject dist/widget-1.2.0.tar.gz \\
      --builder-id https://ci.example/builders/release \\
      --build-type urn:assay:build-type:command:v1 \\
      --external-parameter command=make --from-git --from-lockfile uv.lock \\
      --key release.key --out widget.intoto.json
"""

_RUN_EXAMPLE = """\
example:
  assay attest run --builder-id https://ci.example/builders/release \\
      --subject 'dist/*.whl' --key release.key --out build.intoto.json -- make dist

In GitHub Actions, GitLab CI, Jenkins and Buildkite the builder id (when not given),
the invocation id and the source revision come from the CI's variables; elsewhere the
source is the git checkout of the working directory, if there is one.
"""


OUTSIDE = option(
    "--allow-outside-subjects",
    action="store_true",
    help="accept --subject files outside the working directory (or symlinks to them); "
    "refused by default",
)

DEPENDENCIES = (
    list_option(
        "--dependency",
        default=[],
        metavar="URI[@ALG:HEX]",
        help="a resolved dependency, e.g. pkg:pypi/attrs@23.2.0@sha256:HEX (repeatable)",
    ),
    list_option(
        "--from-lockfile",
        default=[],
        metavar="FILE",
        help="add the lock file and every package it pins (requirements.txt, pip freeze "
        "output, poetry.lock, uv.lock, package-lock.json; repeatable)",
    ),
)

OUTPUT = (
    list_option(
        "--key",
        default=[],
        metavar="KEY",
        help="PEM private key: write a DSSE envelope signed with it (repeatable)",
    ),
    option("--passphrase-env", metavar="VAR", help="passphrase variable for --key"),
    option("--out", metavar="FILE", help="write here instead of stdout"),
)


def register(tree: CommandTree) -> None:
    provenance = tree.add(
        "attest provenance",
        help="Write SLSA provenance v1 for files already built.",
        description="Write a SLSA provenance v1 statement for the --subject files, "
        "DSSE-signed when --key is given.",
        epilog=_PROVENANCE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        handler=_provenance,
    )
    add_options(
        provenance,
        list_option(
            "--subject",
            required=True,
            metavar="FILE",
            help="a file the build produced (digested with SHA-256; repeatable)",
        ),
        option("--builder-id", required=True, metavar="URI", help="runDetails.builder.id"),
        option("--build-type", required=True, metavar="URI", help="buildDefinition.buildType"),
        list_option(
            "--external-parameter",
            required=True,  # SLSA v1 requires a non-empty externalParameters: say so up front
            metavar="K=V",
            help="an externalParameters entry, at least one (SLSA v1 requires the build's "
            "external parameters); a dotted key nests (repeatable)",
        ),
        OUTSIDE,
        *DEPENDENCIES,
        option(
            "--from-git",
            action="store_true",
            help="add the git checkout of the working directory (repository, ref, commit)",
        ),
        option(
            "--invocation-id",
            metavar="ID",
            help="runDetails.metadata.invocationId (default: the CI run, else a new urn:uuid)",
        ),
        option(
            "--started-on", metavar="TIME", help="when the build started (RFC 3339, with a zone)"
        ),
        option(
            "--finished-on",
            metavar="TIME",
            help="when the build finished (default: when the newest subject was written)",
        ),
        *OUTPUT,
    )
    run = tree.add(
        "attest run",
        help="Run a build command and write SLSA provenance v1 for what it produced.",
        description="Run CMD, record its start and finish, digest the files the --subject "
        "globs name, and write a SLSA provenance v1 statement (DSSE-signed with --key).",
        epilog=_RUN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        handler=_run,
    )
    add_options(
        run,
        option(
            "--builder-id",
            metavar="URI",
            help="runDetails.builder.id (default: the one the CI names; required outside CI)",
        ),
        option(
            "--build-type",
            metavar="URI",
            help="buildDefinition.buildType (default: urn:assay:build-type:command:v1)",
        ),
        list_option(
            "--subject",
            required=True,
            metavar="GLOB",
            help="files the build must produce, as globs (** recurses; repeatable); "
            "a glob matching nothing fails the run",
        ),
        OUTSIDE,
        *DEPENDENCIES,
        *OUTPUT,
        option(
            "command",
            nargs=argparse.REMAINDER,
            metavar="-- CMD ARGS",
            help="the build command, after --",
        ),
    )


# -- handlers ---------------------------------------------------------------------------


def _provenance(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from assay import provenance

    subjects = provenance.file_subjects(args.subject, allow_outside=args.allow_outside_subjects)
    dependencies: list[ResourceDescriptor] = []
    if args.from_git:
        source = provenance.read_git_source(Path.cwd())
        _warn_if_dirty(source.dirty)
        dependencies.append(provenance.source_dependency(source))
    dependencies += _lockfile_dependencies(args.from_lockfile)
    dependencies += [provenance.parse_dependency(text) for text in args.dependency]
    ci = provenance.detect_ci(os.environ)
    started = _time(args.started_on, "--started-on")
    finished = _time(args.finished_on, "--finished-on") or _newest_mtime(args.subject)
    statement = provenance.build_statement(
        subjects=subjects,
        builder_id=args.builder_id,
        build_type=args.build_type,
        external_parameters=provenance.parse_external_parameters(args.external_parameter),
        resolved_dependencies=dependencies,
        invocation_id=_invocation_id(args.invocation_id, ci),
        started_on=started,
        finished_on=finished,
    )
    _write(statement, args)
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    import os

    from assay import provenance

    command = _build_command(args.command)
    ci = provenance.detect_ci(os.environ)
    builder_id = _builder_id(args.builder_id, ci)
    # Read inputs before running the build, so a bad option fails before any work.
    lock_dependencies = _lockfile_dependencies(args.from_lockfile)
    named = [provenance.parse_dependency(text) for text in args.dependency]
    source = _run_source(ci)

    outcome = provenance.run_command(command, output_to_stderr=not args.out)
    if not outcome.succeeded:
        print(
            f"assay: the build command exited with {outcome.exit_code}; no provenance written",
            file=sys.stderr,
        )
        return EXIT_FAILED
    subjects = provenance.file_subjects(
        provenance.expand_globs(args.subject), allow_outside=args.allow_outside_subjects
    )
    external, dependencies = _run_parameters(outcome.argv, source)
    statement = provenance.build_statement(
        subjects=subjects,
        builder_id=builder_id,
        build_type=args.build_type or provenance.COMMAND_BUILD_TYPE,
        external_parameters=external,
        internal_parameters={"ci": ci.platform} if ci else None,
        resolved_dependencies=[*dependencies, *lock_dependencies, *named],
        invocation_id=_invocation_id(None, ci),
        started_on=outcome.started_on,
        finished_on=outcome.finished_on,
    )
    _write(statement, args)
    return EXIT_OK


# -- helpers ----------------------------------------------------------------------------


def _run_source(ci: CiFacts | None) -> SourceRevision | None:
    """The source revision the CI names, else the working directory's git checkout."""
    from pathlib import Path

    return ci.source if ci and ci.source else _git_source_if_any(Path.cwd())


def _run_parameters(
    argv: Sequence[str], source: SourceRevision | None
) -> tuple[dict[str, object], list[ResourceDescriptor]]:
    """`attest run`'s externalParameters (the command, and the source when known) and
    the source as a resolved dependency."""
    external: dict[str, object] = {"command": list(argv)}
    if source is None:
        return external, []
    from assay import provenance

    external.update(_source_parameter(source))
    return external, [provenance.source_dependency(source)]


def _build_command(words: list[str]) -> list[str]:
    from assay.errors import InputError

    if not words or words[0] != "--":
        raise InputError("CMD", "expected -- and then the build command, found none")
    return list(words[1:])


def _builder_id(given: str | None, ci: CiFacts | None) -> str:
    from assay.errors import InputError

    builder_id = given or (ci.builder_id if ci else None)
    if not builder_id:
        where = f"{ci.platform} variables" if ci else "outside a recognised CI"
        raise InputError("--builder-id", f"expected a builder id: none found in {where}")
    return builder_id


def _invocation_id(given: str | None, ci: CiFacts | None) -> str:
    """The given id, else the CI run's, else a new urn:uuid."""
    from assay.provenance import new_invocation_id

    return given or (ci.invocation_id if ci else None) or new_invocation_id()


def _source_parameter(source: SourceRevision) -> dict[str, object]:
    return {"source": {"uri": source.uri}} if source.uri else {}


def _lockfile_dependencies(paths: list[str]) -> list[ResourceDescriptor]:
    from pathlib import Path

    from assay.errors import InputError
    from assay.lockfiles import MAX_LOCKFILE_BYTES, read_lockfile
    from assay.provenance import lockfile_dependencies

    result: list[ResourceDescriptor] = []
    for text in paths:
        path = Path(text)
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_LOCKFILE_BYTES + 1)
        except OSError as error:
            raise InputError(text, f"cannot read: {error.strerror}") from None
        lock = read_lockfile(data, text)  # refuses data past the limit, naming the file
        result += lockfile_dependencies(lock, data)
        for skipped in lock.skipped:
            print(
                f"assay: {text}, {skipped.location}: not recorded: {skipped.reason}",
                file=sys.stderr,
            )
    return result


def _git_source_if_any(path: Path) -> SourceRevision | None:
    from assay.errors import InputError
    from assay.provenance import read_git_source

    try:
        source = read_git_source(path)
    except InputError as error:
        print(f"assay: no source recorded: {error}", file=sys.stderr)
        return None
    _warn_if_dirty(source.dirty)
    return source


def _warn_if_dirty(dirty: bool) -> None:
    if dirty:
        print(
            "assay: warning: the git working tree has uncommitted changes; "
            "the recorded commit does not describe them",
            file=sys.stderr,
        )


def _time(text: str | None, option: str) -> dt.datetime | None:
    import datetime as dt

    from assay.errors import InputError

    if text is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise InputError(
            option, f"expected an RFC 3339 time with a zone (2026-01-31T12:00:00Z), found {text!r}"
        )
    return moment


def _newest_mtime(paths: list[str]) -> dt.datetime:
    import datetime as dt
    import os

    newest = max(os.stat(p).st_mtime for p in paths)
    return dt.datetime.fromtimestamp(newest, dt.UTC)


def _write(statement: Statement, args: argparse.Namespace) -> None:
    import json

    from assay import dsse
    from assay._cli._options import write_output
    from assay._cli.attest_signing import load_private_keys

    payload = statement.to_json()
    signed_by = ""
    if args.key:
        signers = load_private_keys(args.key, args.passphrase_env)
        envelope = dsse.sign(payload, dsse.INTOTO_PAYLOAD_TYPE, signers)
        output = (json.dumps(envelope.to_dict(), indent=2) + "\n").encode()
        signed_by = ", signed by " + ", ".join(s.keyid for s in signers)
    else:
        output = statement.to_json(pretty=True) + b"\n"
    count = len(statement.subject)
    dependencies = len(statement.provenance_v1().resolved_dependencies)
    if args.out:
        write_output(args.out, output)
        target = args.out
    else:
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
        target = "stdout"
    print(
        f"assay: wrote provenance for {count} subject(s) with {dependencies} resolved "
        f"dependencies to {target}{signed_by}",
        file=sys.stderr,
    )
