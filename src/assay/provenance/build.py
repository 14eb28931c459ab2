"""SLSA provenance v1 statements from what is known about a build (pure).

`build_statement(...)` assembles the statement with the `assay.attestation` models and
checks it with the project's validator in strict mode, so nothing invalid is returned.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from assay.attestation import (
    PROVENANCE_V1,
    ProvenanceV1,
    ResourceDescriptor,
    Statement,
    format_timestamp,
    validate,
)
from assay.errors import InputError

COMMAND_BUILD_TYPE = "urn:assay:build-type:command:v1"
"""The build type of `assay attest run`: externalParameters `command` (argv) and, when
known, `source.uri`; resolvedDependencies start with the source checkout."""

MAX_DEPENDENCIES = 10_000
"""Most resolved dependencies one statement may list (the verifier reads no more)."""

# Where a strict-validation finding comes from, for messages that name the option.
_OPTION_OF_PATH = {
    "$.predicate.runDetails.builder.id": "--builder-id",
    "$.predicate.buildDefinition.buildType": "--build-type",
    "$.predicate.runDetails.metadata.invocationId": "--invocation-id",
    "$.predicate.buildDefinition.externalParameters": "--external-parameter",
}


def _parent(result: dict[str, Any], parts: list[str], where: str) -> dict[str, Any]:
    """The object a dotted key's last part goes in, made as needed."""
    node = result
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise InputError(
                where,
                f"expected {'.'.join(parts[: depth + 1])!r} to hold parameters, "
                f"found it set to a value by an earlier {where}",
            )
        node = child
    return node


def parse_external_parameters(
    items: Iterable[str], *, where: str = "--external-parameter"
) -> dict[str, Any]:
    """`K=V` pairs as an object; a dotted key nests (`workflow.ref=main`), as policies read it."""
    result: dict[str, Any] = {}
    for item in items:
        key, equals, value = item.partition("=")
        parts = key.split(".")
        if not equals or not all(parts):
            raise InputError(where, f"expected KEY=VALUE with a non-empty key, found {item!r}")
        node = _parent(result, parts, where)
        if parts[-1] in node:
            raise InputError(where, f"expected each key once, found {key!r} again")
        node[parts[-1]] = value
    return result


def new_invocation_id() -> str:
    """A fresh invocation id for builds outside CI (`urn:uuid:...`)."""
    return uuid.uuid4().urn


def _unique(descriptors: Iterable[ResourceDescriptor]) -> list[ResourceDescriptor]:
    seen: set[bytes] = set()
    result: list[ResourceDescriptor] = []
    for descriptor in descriptors:
        key = descriptor.to_json()
        if key not in seen:
            seen.add(key)
            result.append(descriptor)
    return result


def _repeated_names(subjects: Sequence[ResourceDescriptor]) -> list[str]:
    """The names more than one subject has, sorted."""
    names = [s.name for s in subjects if s.name is not None]
    return sorted({n for n in names if names.count(n) > 1})


def _checked_subjects(subjects: Sequence[ResourceDescriptor]) -> list[ResourceDescriptor]:
    unique = _unique(subjects)
    if not unique:
        raise InputError("--subject", "expected at least one subject, found none")
    repeated = _repeated_names(unique)
    if repeated:
        raise InputError(
            "--subject", f"expected each subject name once, found {repeated[0]!r} with two digests"
        )
    return unique


def _check_times(started_on: dt.datetime | None, finished_on: dt.datetime | None) -> None:
    if started_on and finished_on and finished_on < started_on:
        raise InputError(
            "--finished-on",
            f"expected a time at or after the start {format_timestamp(started_on)}, "
            f"found {format_timestamp(finished_on)}",
        )


def _checked_dependencies(
    resolved_dependencies: Iterable[ResourceDescriptor],
) -> list[ResourceDescriptor]:
    dependencies = _unique(resolved_dependencies)
    if len(dependencies) > MAX_DEPENDENCIES:
        raise InputError(
            "resolvedDependencies",
            f"expected at most {MAX_DEPENDENCIES} dependencies, found {len(dependencies)}",
        )
    return dependencies


def _timestamp(moment: dt.datetime | None) -> str | None:
    return format_timestamp(moment) if moment else None


def _refuse_findings(statement: Statement) -> None:
    """The first strict finding, as an error naming the option it came from."""
    findings = validate(statement)
    if findings:
        first = findings[0]
        where = _OPTION_OF_PATH.get(first.path) or (
            "--subject" if first.path.startswith("$.subject") else first.path
        )
        raise InputError(where, first.message)


def build_statement(
    *,
    subjects: Sequence[ResourceDescriptor],
    builder_id: str,
    build_type: str,
    external_parameters: Mapping[str, Any],
    resolved_dependencies: Iterable[ResourceDescriptor] = (),
    internal_parameters: Mapping[str, Any] | None = None,
    invocation_id: str | None = None,
    started_on: dt.datetime | None = None,
    finished_on: dt.datetime | None = None,
) -> Statement:
    """An in-toto v1 statement with a SLSA provenance v1 predicate, checked strictly.

    Raises `InputError` naming the option when a value would make it invalid (a builder id
    that is not a URI, no subject, a finish before the start).
    """
    subjects = _checked_subjects(subjects)
    _check_times(started_on, finished_on)
    predicate = ProvenanceV1(
        build_type=build_type,
        external_parameters=external_parameters,
        internal_parameters=internal_parameters or None,
        resolved_dependencies=_checked_dependencies(resolved_dependencies),
        builder_id=builder_id,
        invocation_id=invocation_id,
        started_on=_timestamp(started_on),
        finished_on=_timestamp(finished_on),
    )
    statement = Statement(subject=subjects, predicate_type=PROVENANCE_V1, predicate=predicate)
    _refuse_findings(statement)
    return statement
