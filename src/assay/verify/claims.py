"""What a provenance statement claims, in one shape for v0.1, v0.2 and v1.

This is a small adapter over parsed statement JSON: it reads only the fields the
verifier compares, and knows where the common build types (slsa-github-generator,
GitHub Actions workflow, container-based, Google Cloud Build) record their source and
ref. It never decides anything; `assay.verify.checks` does.

Only payloads whose signatures were verified should be handed to `read_claims`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from assay import attestation, protocol
from assay.attestation import loads_strict
from assay.attestation.constants import MAX_PAYLOAD_BYTES
from assay.attestation.provenance import Material, ProvenanceV01, ProvenanceV02, ProvenanceV1
from assay.attestation.views import ResourceDescriptor, array
from assay.errors import AttestationError
from assay.protocol import PROVENANCE_V01, PROVENANCE_V02, PROVENANCE_V1

STATEMENT_TYPES: Final = protocol.STATEMENT_TYPES
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
    name: str | None = None


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


_Head = tuple[str, str, tuple[Subject, ...]]
"""What every statement says alike: its type, the predicate type and the subjects."""


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
    return (Dependency(first.uri, first.digest, True, first.name), *dependencies[1:])


def _dependencies(
    items: Sequence[ResourceDescriptor | Material], count: int
) -> tuple[Dependency, ...]:
    """Dependencies of the typed views (`count`: the entries of the raw list, bounded
    before any is read)."""
    if count > MAX_DEPENDENCIES:
        raise AttestationError(
            "$.predicate", f"expected at most {MAX_DEPENDENCIES} dependencies, got {count}"
        )
    result = []
    for item in items:
        uri, digest = _str(item.uri), dict(item.digest)
        name = _str(item.name) if isinstance(item, ResourceDescriptor) else None
        result.append(Dependency(uri, digest, _is_source_uri(uri, digest), name))
    return tuple(result)


def _count(predicate: Mapping[str, Any], *path: str) -> int:
    value: Any = predicate
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return len(value) if isinstance(value, list) else 0


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


def subject_digests(statement: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The digest object of each subject of a raw statement that has one, in order."""
    subjects = statement.get("subject")
    return [
        subject["digest"]
        for subject in array(subjects)
        if isinstance(subject, Mapping) and isinstance(subject.get("digest"), Mapping)
    ]


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
    reader = _READERS.get(predicate_type)
    if reader is None:
        # An unknown predicate still yields subjects, so the report can say what it was.
        return Claims(statement_type, predicate_type, subjects, None, None, {})
    return reader((statement_type, predicate_type, subjects), predicate)


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


def _v02(head: _Head, predicate: Mapping[str, Any]) -> Claims:
    view = ProvenanceV02.from_dict(predicate)
    invocation = view.invocation
    config = invocation.config_source
    parameters = dict(invocation.parameters)
    # The spec's 0.2 -> 1.0 mapping: entry point and config source join the parameters.
    if _str(config.entry_point):
        parameters.setdefault("entryPoint", config.entry_point)
    if _str(config.uri):
        parameters.setdefault("source", config.uri)
    materials = _as_source(_dependencies(view.materials, _count(predicate, "materials")))
    environment = invocation.environment
    github = _github_ref_fields(environment, upper=False) if "github_ref" in environment else {}
    return Claims(
        *head,
        _str(view.builder_id),
        _str(view.build_type),
        parameters,
        source_uri=materials[0].uri if materials else None,
        trigger_uri=_str(config.uri),
        dependencies=materials,
        **github,
    )


def _v1(head: _Head, predicate: Mapping[str, Any]) -> Claims:
    view = ProvenanceV1.from_dict(predicate)
    external = dict(view.external_parameters)
    dependencies = _dependencies(
        view.resolved_dependencies,
        _count(predicate, "buildDefinition", "resolvedDependencies"),
    )
    github, trigger_uri = _v1_trigger(view.internal_parameters, external)
    return Claims(
        *head,
        _str(view.builder_id),
        _str(view.build_type),
        external,
        source_uri=dependencies[0].uri if dependencies else None,
        trigger_uri=trigger_uri,
        dependencies=dependencies,
        **github,
    )


def _v1_trigger(
    internal: Mapping[str, Any], external: Mapping[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The ref fields and the triggering repository, from wherever the build type records
    them; the later readers win (workflow, then build config, then source)."""
    github: dict[str, Any] = {}
    trigger_uri: str | None = None
    for read in (_github_internal, _github_workflow, _build_config_source):
        trigger_uri = read(internal, external, github) or trigger_uri
    source = _obj(external.get("source"))
    if _str(source.get("uri")) and trigger_uri is None:
        trigger_uri = source["uri"]
    return github, trigger_uri


def _github_internal(
    internal: Mapping[str, Any], _external: Mapping[str, Any], github: dict[str, Any]
) -> str | None:
    """slsa-github-generator: GitHub's environment in the internal parameters."""
    if "GITHUB_REF" not in internal and "GITHUB_EVENT_NAME" not in internal:
        return None
    github.update(_github_ref_fields(internal, upper=True))
    workflow_ref = _str(internal.get("GITHUB_WORKFLOW_REF"))
    if not workflow_ref:
        return None
    # `owner/repo/.github/workflows/x.yml@ref` -> `git+https://github.com/owner/repo@ref`
    path, _, workflow_at = workflow_ref.partition("@")
    repo = "/".join(path.split("/")[:2])
    return f"git+{_GITHUB_SERVER}{repo}@{workflow_at}"


def _github_workflow(
    _internal: Mapping[str, Any], external: Mapping[str, Any], github: dict[str, Any]
) -> str | None:
    """GitHub Actions workflow build type: the workflow's repository and ref are the source."""
    workflow = _obj(external.get("workflow"))
    if not _str(workflow.get("repository")):
        return None
    ref: str | None = _str(workflow.get("ref"))
    github.setdefault("ref", ref)
    if ref and "ref_type" not in github:
        github["ref_type"] = _ref_type(ref)
    return f"git+{workflow['repository']}" + (f"@{ref}" if ref else "")


def _build_config_source(
    _internal: Mapping[str, Any], external: Mapping[str, Any], github: dict[str, Any]
) -> str | None:
    """Google Cloud Build: the build config's repository and ref."""
    config_source = _obj(external.get("buildConfigSource"))
    repository = _str(config_source.get("repository"))
    if not repository:
        return None
    config_ref = _str(config_source.get("ref"))
    trigger_uri = repository if repository.startswith("git+") else f"git+{repository}"
    github.setdefault("ref", config_ref)
    if config_ref:
        github.setdefault("ref_type", _ref_type(config_ref))
        trigger_uri = f"{trigger_uri}@{config_ref}"
    return trigger_uri


def _ref_type(ref: str) -> str:
    return "tag" if ref.startswith("refs/tags/") else "branch"


def _v01(head: _Head, predicate: Mapping[str, Any]) -> Claims:
    view = ProvenanceV01.from_dict(predicate)
    recipe = view.recipe
    arguments = dict(recipe.arguments) if recipe is not None else {}
    parameters = dict(arguments)
    if recipe is not None and _str(recipe.entry_point):
        parameters.setdefault("entryPoint", recipe.entry_point)
    materials = _as_source(_dependencies(view.materials, _count(predicate, "materials")))
    tag = _str(_obj(arguments.get("substitutions")).get("TAG_NAME"))
    return Claims(
        *head,
        _str(view.builder_id),
        _str(recipe.type) if recipe is not None else None,
        parameters,
        source_uri=materials[0].uri if materials else None,
        ref=f"refs/tags/{tag}" if tag else None,
        ref_type="tag" if tag else None,
        dependencies=materials,
    )


_READERS: Final = {PROVENANCE_V1: _v1, PROVENANCE_V02: _v02, PROVENANCE_V01: _v01}
