"""SLSA build provenance predicates: v1, v0.2 and v0.1 (typed read access, lossless).

Names are snake_case in Python and lowerCamelCase on the wire
(`build_definition.external_parameters` reads `buildDefinition.externalParameters`).
In v1, unset, null and empty read alike: an absent `internalParameters` reads as `{}`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assay.attestation.views import (
    JSONView,
    Member,
    ResourceDescriptor,
    _put,
    digests,
    flag,
    obj,
    optional_view,
    text,
    view,
    views,
)


def _object_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Builder(JSONView):
    """v1 `runDetails.builder`: the platform trusted to run the build."""

    __slots__ = ()

    def __init__(
        self,
        *,
        id: str,
        version: Mapping[str, str] | None = None,
        builder_dependencies: Iterable[ResourceDescriptor] | None = None,
    ) -> None:
        raw: dict[str, Any] = {"id": id}
        _put(raw, "builderDependencies", list(builder_dependencies or []) or None)
        _put(raw, "version", version)
        self._raw = raw

    id = text("id")
    version = digests("version")
    builder_dependencies = views("builderDependencies", ResourceDescriptor)


class BuildMetadata(JSONView):
    """v1 `runDetails.metadata`."""

    __slots__ = ()

    invocation_id = text("invocationId")
    started_on = text("startedOn", "Timestamp text, `<YYYY>-<MM>-<DD>T<hh>:<mm>:<ss>Z`.")
    finished_on = text("finishedOn")


class BuildDefinition(JSONView):
    """v1 `buildDefinition`: the parameterized template and its inputs."""

    __slots__ = ()

    build_type = text("buildType")
    external_parameters = obj("externalParameters")
    internal_parameters = obj("internalParameters")
    resolved_dependencies = views("resolvedDependencies", ResourceDescriptor)


class RunDetails(JSONView):
    """v1 `runDetails`: who ran the build and what it left behind."""

    __slots__ = ()

    builder = view("builder", Builder)
    metadata = view("metadata", BuildMetadata)
    byproducts = views("byproducts", ResourceDescriptor)


class ProvenanceV1(JSONView):
    """Predicate of `https://slsa.dev/provenance/v1`."""

    __slots__ = ()

    def __init__(
        self,
        *,
        build_type: str,
        external_parameters: Mapping[str, Any],
        builder_id: str,
        internal_parameters: Mapping[str, Any] | None = None,
        resolved_dependencies: Iterable[ResourceDescriptor] | None = None,
        builder_version: Mapping[str, str] | None = None,
        builder_dependencies: Iterable[ResourceDescriptor] | None = None,
        invocation_id: str | None = None,
        started_on: str | None = None,
        finished_on: str | None = None,
        byproducts: Iterable[ResourceDescriptor] | None = None,
    ) -> None:
        definition: dict[str, Any] = {}
        _put(definition, "buildType", build_type)
        _put(definition, "externalParameters", external_parameters)
        _put(definition, "internalParameters", internal_parameters)
        _put(definition, "resolvedDependencies", list(resolved_dependencies or []) or None)
        builder = Builder(
            id=builder_id, version=builder_version, builder_dependencies=builder_dependencies
        )
        run: dict[str, Any] = {"builder": builder.to_dict()}
        metadata: dict[str, Any] = {}
        _put(metadata, "invocationId", invocation_id)
        _put(metadata, "startedOn", started_on)
        _put(metadata, "finishedOn", finished_on)
        if metadata:
            run["metadata"] = metadata
        _put(run, "byproducts", list(byproducts or []) or None)
        self._raw = {"buildDefinition": definition, "runDetails": run}

    build_definition = view("buildDefinition", BuildDefinition)
    run_details = view("runDetails", RunDetails)

    # Shortcuts for the fields policies look at most.
    @property
    def builder_id(self) -> str | None:
        return self.run_details.builder.id

    @property
    def build_type(self) -> str | None:
        return self.build_definition.build_type

    @property
    def external_parameters(self) -> dict[str, Any]:
        return self.build_definition.external_parameters

    @property
    def internal_parameters(self) -> dict[str, Any]:
        return self.build_definition.internal_parameters

    @property
    def resolved_dependencies(self) -> tuple[ResourceDescriptor, ...]:
        return self.build_definition.resolved_dependencies


class Material(JSONView):
    """v0.1 / v0.2 `materials[*]`: `uri` and `digest`."""

    __slots__ = ()

    uri = text("uri")
    digest = digests("digest")


class ConfigSource(Material):
    """v0.2 `invocation.configSource`: where the build configuration came from."""

    __slots__ = ()

    entry_point = text("entryPoint")


class Invocation(JSONView):
    """v0.2 `invocation`."""

    __slots__ = ()

    config_source = view("configSource", ConfigSource)
    parameters = obj("parameters")
    environment = obj("environment")


class Completeness(JSONView):
    """v0.1 / v0.2 `metadata.completeness` claims (v0.1 says `arguments`, v0.2 `parameters`)."""

    __slots__ = ()

    parameters = flag("parameters")
    arguments = flag("arguments")
    environment = flag("environment")
    materials = flag("materials")


class LegacyMetadata(JSONView):
    """v0.1 / v0.2 `metadata`."""

    __slots__ = ()

    build_invocation_id = text("buildInvocationId")
    build_started_on = text("buildStartedOn")
    build_finished_on = text("buildFinishedOn")
    completeness = view("completeness", Completeness)
    reproducible = flag("reproducible")


class _BuilderRef(JSONView):
    """v0.1 / v0.2 `builder`: only `id`."""

    __slots__ = ()

    id = text("id")


class _LegacyProvenance(JSONView):
    """What v0.1 and v0.2 share: `builder.id`, `metadata` and `materials`."""

    __slots__ = ()
    _builder = optional_view("builder", _BuilderRef)
    metadata = view("metadata", LegacyMetadata)
    materials = views("materials", Material)

    @property
    def builder_id(self) -> str | None:
        builder = self._builder
        return builder.id if builder else None


class ProvenanceV02(_LegacyProvenance):
    """Predicate of `https://slsa.dev/provenance/v0.2`."""

    __slots__ = ()

    build_type = text("buildType")
    invocation = view("invocation", Invocation)
    build_config = Member("buildConfig", _object_or_none)


class Recipe(JSONView):
    """v0.1 `recipe`."""

    __slots__ = ()

    type = text("type")
    defined_in_material = Member("definedInMaterial", _integer)
    entry_point = text("entryPoint")
    arguments = obj("arguments")
    environment = obj("environment")


class ProvenanceV01(_LegacyProvenance):
    """Predicate of `https://slsa.dev/provenance/v0.1`."""

    __slots__ = ()

    recipe = optional_view(
        "recipe", Recipe, "None when unset or null (allowed, though discouraged)."
    )
