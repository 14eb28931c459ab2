"""What a provenance statement claims, in one shape for v0.1, v0.2 and v1.

This is a small adapter over parsed statement JSON: it reads only the fields the
verifier compares, and knows where the common build types (slsa-github-generator,
GitHub Actions workflow, container-based, Google Cloud Build) record their source and
ref. It never decides anything; `assay.verify.checks` does.

Only payloads whose signatures were verified should be handed to `read_claims`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from assay import attestation
from assay.attestation import loads_strict
from assay.attestation.constants import MAX_PAYLOAD_BYTES
from assay.errors import AttestationError
from assay.policy.model import PROVENANCE_V01, PROVENANCE_V02, PROVENANCE_V1

STATEMENT_TYPES: Final = (
    "https://in-toto.io/Statement/v1",
    "https://in-toto.io/Statement/v0.1",
)
MAX_SUBJECTS: Final = 10_000
MAX_DEPENDENCIES: Final = 10_000

_GITHUB_SERVER: Final = "https://github.com/"


@dataclass(frozen=True, slots=True)
class Subject:
    name: str
    digest: dict[str, str]


@dataclass(frozen=True, slots=True)
class Dependency:
    uri: str | None
    digest: dict[str, str]
    is_source: bool


@dataclass(frozen=True, slots=True)
class Claims:
    """The verifier's view of one provenance statement."""

    statement_type: str
    predicate_type: str
    subjects: tuple[Subject, ...]
    builder_id: str | None
    build_type: str | None
    external_parameters: dict[str, Any]
    source_uri: str | None = None
    """Where the source came from, as recorded (e.g. `git+https://github.com/o/r@refs/…`)."""
    trigger_uri: str | None = None
    """The repository (and ref) that triggered the build, when recorded apart from source."""
    ref: str | None = None
    ref_type: str | None = None
    base_ref: str | None = None
    """For tag builds, the branch the tag was made from, when recorded."""
    event_name: str | None = None
    workflow_inputs: dict[str, Any] | None = None
    dependencies: tuple[Dependency, ...] = ()
    notes: tuple[str, ...] = field(default=())


def _obj(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _digest(value: object) -> dict[str, str]:
    return {str(k): v for k, v in _obj(value).items() if isinstance(v, str)}


_REVISION_DIGESTS: Final = frozenset({"gitCommit", "gitTree", "gitBlob", "gitTag"})
"""in-toto DigestSet names of VCS revisions. `sha1` is not one: it is a file digest like
`sha256` (in-toto's digest_set.md), so a tarball known only by `sha1` is a dependency."""


def _is_source_uri(uri: str | None, digest: Mapping[str, str]) -> bool:
    # Source dependencies are the repositories code is checked out from: they are
    # covered by the source expectations, not by dependency build levels. A material
    # known only by a VCS revision (`gitCommit`, …) is source too: no build produced it.
    # Cloud Build's repository material, recorded with a `sha1` commit, is its first
    # material, which `_as_source` reads as the source (v0.1, v0.2).
    if uri and (uri.startswith("git+") or "/commit/" in uri):
        return True
    return "gitCommit" in digest or (bool(digest) and set(digest) <= _REVISION_DIGESTS)


def _as_source(dependencies: tuple[Dependency, ...]) -> tuple[Dependency, ...]:
    """The first material is what the verifier reads as the source (v0.1, v0.2)."""
    if not dependencies or dependencies[0].is_source:
        return dependencies
    first = dependencies[0]
    return (Dependency(first.uri, first.digest, True), *dependencies[1:])


def _dependencies(items: object) -> tuple[Dependency, ...]:
    if not isinstance(items, list):
        return ()
    if len(items) > MAX_DEPENDENCIES:
        raise AttestationError(
            "$.predicate", f"expected at most {MAX_DEPENDENCIES} dependencies, got {len(items)}"
        )
    result = []
    for item in items:
        data = _obj(item)
        uri = _str(data.get("uri"))
        digest = _digest(data.get("digest"))
        result.append(Dependency(uri, digest, _is_source_uri(uri, digest)))
    return tuple(result)


def _subjects(statement: Mapping[str, Any]) -> tuple[Subject, ...]:
    raw = statement.get("subject")
    if not isinstance(raw, list) or not raw:
        raise AttestationError("$.subject", "expected a non-empty array of subjects")
    if len(raw) > MAX_SUBJECTS:
        raise AttestationError(
            "$.subject", f"expected at most {MAX_SUBJECTS} subjects, got {len(raw)}"
        )
    subjects = []
    for index, item in enumerate(raw):
        data = _obj(item)
        digest = _digest(data.get("digest"))
        if not digest:
            raise AttestationError(f"$.subject[{index}].digest", "expected at least one digest")
        subjects.append(Subject(str(data.get("name") or ""), digest))
    return tuple(subjects)


def parse_statement(payload: bytes, *, where: str = "payload") -> dict[str, Any]:
    """The statement object in verified payload bytes.

    Strict, because the verdict depends on it: a key given twice anywhere, a statement
    field spelled in another case, or nesting deeper than the limit is an error.
    """
    value = loads_strict(
        payload, where=f"{where}: payload", limit=MAX_PAYLOAD_BYTES, statement=True
    )
    if not isinstance(value, dict):
        raise AttestationError(f"{where}: payload", "expected a JSON object (a statement)")
    try:
        return attestation.Statement._wrap(value).to_dict()
    except AttestationError as error:
        raise AttestationError(where, error.reason) from None


def read_claims(statement: Mapping[str, Any]) -> Claims:
    """Extract the claims of a provenance statement (v0.1, v0.2 or v1)."""
    statement_type = _str(statement.get("_type")) or ""
    predicate_type = _str(statement.get("predicateType")) or ""
    predicate = statement.get("predicate")
    if not isinstance(predicate, Mapping):
        raise AttestationError("$.predicate", "expected an object")
    subjects = _subjects(statement)
    if predicate_type == PROVENANCE_V1:
        return _v1(statement_type, predicate_type, subjects, predicate)
    if predicate_type == PROVENANCE_V02:
        return _v02(statement_type, predicate_type, subjects, predicate)
    if predicate_type == PROVENANCE_V01:
        return _v01(statement_type, predicate_type, subjects, predicate)
    # An unknown predicate still yields subjects, so the report can say what it was.
    return Claims(statement_type, predicate_type, subjects, None, None, {})


def _github_ref_fields(env: Mapping[str, Any], upper: bool) -> dict[str, Any]:
    def get(name: str) -> Any:
        return env.get(name.upper() if upper else name.lower())

    payload = get("github_event_payload")
    event = _obj(payload)
    base_ref = _str(get("github_base_ref")) or _str(event.get("base_ref"))
    if base_ref is None:
        base_ref = _str(_obj(event.get("release")).get("target_commitish"))
        if base_ref and not base_ref.startswith("refs/"):
            base_ref = f"refs/heads/{base_ref}"
    event_name = _str(get("github_event_name"))
    inputs = _obj(event.get("inputs")) if event_name == "workflow_dispatch" else None
    return {
        "ref": _str(get("github_ref")),
        "ref_type": _str(get("github_ref_type")),
        "base_ref": base_ref,
        "event_name": event_name,
        "workflow_inputs": inputs,
    }


def _v02(
    statement_type: str,
    predicate_type: str,
    subjects: tuple[Subject, ...],
    predicate: Mapping[str, Any],
) -> Claims:
    invocation = _obj(predicate.get("invocation"))
    config = _obj(invocation.get("configSource"))
    parameters = _obj(invocation.get("parameters"))
    # The spec's 0.2 -> 1.0 mapping: entry point and config source join the parameters.
    if _str(config.get("entryPoint")):
        parameters.setdefault("entryPoint", config["entryPoint"])
    if _str(config.get("uri")):
        parameters.setdefault("source", config["uri"])
    materials = _as_source(_dependencies(predicate.get("materials")))
    environment = _obj(invocation.get("environment"))
    github = _github_ref_fields(environment, upper=False) if "github_ref" in environment else {}
    return Claims(
        statement_type,
        predicate_type,
        subjects,
        _str(_obj(predicate.get("builder")).get("id")),
        _str(predicate.get("buildType")),
        parameters,
        source_uri=materials[0].uri if materials else None,
        trigger_uri=_str(config.get("uri")),
        dependencies=materials,
        **github,
    )


def _v1(
    statement_type: str,
    predicate_type: str,
    subjects: tuple[Subject, ...],
    predicate: Mapping[str, Any],
) -> Claims:
    definition = _obj(predicate.get("buildDefinition"))
    run = _obj(predicate.get("runDetails"))
    external = _obj(definition.get("externalParameters"))
    internal = _obj(definition.get("internalParameters"))
    dependencies = _dependencies(definition.get("resolvedDependencies"))
    source_uri = dependencies[0].uri if dependencies else None
    trigger_uri: str | None = None
    github: dict[str, Any] = {}
    if "GITHUB_REF" in internal or "GITHUB_EVENT_NAME" in internal:
        github = _github_ref_fields(internal, upper=True)
        workflow_ref = _str(internal.get("GITHUB_WORKFLOW_REF"))
        if workflow_ref:
            # `owner/repo/.github/workflows/x.yml@ref` -> `git+https://github.com/owner/repo@ref`
            path, _, workflow_at = workflow_ref.partition("@")
            repo = "/".join(path.split("/")[:2])
            trigger_uri = f"git+{_GITHUB_SERVER}{repo}@{workflow_at}"
    workflow = _obj(external.get("workflow"))
    if _str(workflow.get("repository")):
        # GitHub Actions workflow build type: the workflow's repository and ref are the source.
        ref: str | None = _str(workflow.get("ref"))
        trigger_uri = f"git+{workflow['repository']}" + (f"@{ref}" if ref else "")
        github.setdefault("ref", ref)
        if ref and "ref_type" not in github:
            github["ref_type"] = "tag" if ref.startswith("refs/tags/") else "branch"
    config_source = _obj(external.get("buildConfigSource"))
    if _str(config_source.get("repository")):
        # Google Cloud Build: the build config's repository and ref.
        config_ref = _str(config_source.get("ref"))
        trigger_uri = _str(config_source.get("repository"))
        if trigger_uri and not trigger_uri.startswith("git+"):
            trigger_uri = f"git+{trigger_uri}"
        if config_ref and trigger_uri:
            trigger_uri = f"{trigger_uri}@{config_ref}"
        github.setdefault("ref", config_ref)
        if config_ref:
            github.setdefault(
                "ref_type", "tag" if config_ref.startswith("refs/tags/") else "branch"
            )
    source = _obj(external.get("source"))
    if _str(source.get("uri")) and trigger_uri is None:
        trigger_uri = source["uri"]
    return Claims(
        statement_type,
        predicate_type,
        subjects,
        _str(_obj(run.get("builder")).get("id")),
        _str(definition.get("buildType")),
        external,
        source_uri=source_uri,
        trigger_uri=trigger_uri,
        dependencies=dependencies,
        **github,
    )


def _v01(
    statement_type: str,
    predicate_type: str,
    subjects: tuple[Subject, ...],
    predicate: Mapping[str, Any],
) -> Claims:
    recipe = _obj(predicate.get("recipe"))
    arguments = _obj(recipe.get("arguments"))
    parameters = dict(arguments)
    if _str(recipe.get("entryPoint")):
        parameters.setdefault("entryPoint", recipe["entryPoint"])
    materials = _as_source(_dependencies(predicate.get("materials")))
    substitutions = _obj(arguments.get("substitutions"))
    tag = _str(substitutions.get("TAG_NAME"))
    return Claims(
        statement_type,
        predicate_type,
        subjects,
        _str(_obj(predicate.get("builder")).get("id")),
        _str(recipe.get("type")),
        parameters,
        source_uri=materials[0].uri if materials else None,
        ref=f"refs/tags/{tag}" if tag else None,
        ref_type="tag" if tag else None,
        dependencies=materials,
    )
