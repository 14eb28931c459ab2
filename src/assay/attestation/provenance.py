"""SLSA build provenance predicates: v1, v0.2 and v0.1 (typed read access, lossless).

Names are snake_case in Python and lowerCamelCase on the wire
(`build_definition.external_parameters` reads `buildDefinition.externalParameters`).
In v1, unset, null and empty read alike: an absent `internalParameters` reads as `{}`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assay.attestation.views import (
    DigestSet,
    JSONView,
    ResourceDescriptor,
    _put,
    digest_set,
)


def _flag(raw: dict[str, Any], key: str) -> bool | None:
    value = raw.get(key)
    return value if isinstance(value, bool) else None


class Builder(JSONView):
    """v1 `runDetails.builder`: the platform trusted to run the build."""

    __slots__ = ()
    _KNOWN = frozenset({"id", "builderDependencies", "version"})

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

    @property
    def id(self) -> str | None:
        return self._str("id")

    @property
    def version(self) -> dict[str, str]:
        return digest_set(self._raw.get("version"))

    @property
    def builder_dependencies(self) -> tuple[ResourceDescriptor, ...]:
        return self._views("builderDependencies", ResourceDescriptor)


class BuildMetadata(JSONView):
    """v1 `runDetails.metadata`."""

    __slots__ = ()
    _KNOWN = frozenset({"invocationId", "startedOn", "finishedOn"})

    @property
    def invocation_id(self) -> str | None:
        return self._str("invocationId")

    @property
    def started_on(self) -> str | None:
        """Timestamp text, `<YYYY>-<MM>-<DD>T<hh>:<mm>:<ss>Z`."""
        return self._str("startedOn")

    @property
    def finished_on(self) -> str | None:
        return self._str("finishedOn")


class BuildDefinition(JSONView):
    """v1 `buildDefinition`: the parameterized template and its inputs."""

    __slots__ = ()
    _KNOWN = frozenset(
        {"buildType", "externalParameters", "internalParameters", "resolvedDependencies"}
    )

    @property
    def build_type(self) -> str | None:
        return self._str("buildType")

    @property
    def external_parameters(self) -> dict[str, Any]:
        return self._obj("externalParameters")

    @property
    def internal_parameters(self) -> dict[str, Any]:
        return self._obj("internalParameters")

    @property
    def resolved_dependencies(self) -> tuple[ResourceDescriptor, ...]:
        return self._views("resolvedDependencies", ResourceDescriptor)


class RunDetails(JSONView):
    """v1 `runDetails`: who ran the build and what it left behind."""

    __slots__ = ()
    _KNOWN = frozenset({"builder", "metadata", "byproducts"})

    @property
    def builder(self) -> Builder:
        return self._view("builder", Builder) or Builder._wrap({})

    @property
    def metadata(self) -> BuildMetadata:
        return self._view("metadata", BuildMetadata) or BuildMetadata._wrap({})

    @property
    def byproducts(self) -> tuple[ResourceDescriptor, ...]:
        return self._views("byproducts", ResourceDescriptor)


class ProvenanceV1(JSONView):
    """Predicate of `https://slsa.dev/provenance/v1`."""

    __slots__ = ()
    _KNOWN = frozenset({"buildDefinition", "runDetails"})

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

    @property
    def build_definition(self) -> BuildDefinition:
        return self._view("buildDefinition", BuildDefinition) or BuildDefinition._wrap({})

    @property
    def run_details(self) -> RunDetails:
        return self._view("runDetails", RunDetails) or RunDetails._wrap({})

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
    _KNOWN = frozenset({"uri", "digest"})

    @property
    def uri(self) -> str | None:
        return self._str("uri")

    @property
    def digest(self) -> DigestSet:
        return digest_set(self._raw.get("digest"))


class ConfigSource(Material):
    """v0.2 `invocation.configSource`: where the build configuration came from."""

    __slots__ = ()
    _KNOWN = frozenset({"uri", "digest", "entryPoint"})

    @property
    def entry_point(self) -> str | None:
        return self._str("entryPoint")


class Invocation(JSONView):
    """v0.2 `invocation`."""

    __slots__ = ()
    _KNOWN = frozenset({"configSource", "parameters", "environment"})

    @property
    def config_source(self) -> ConfigSource:
        return self._view("configSource", ConfigSource) or ConfigSource._wrap({})

    @property
    def parameters(self) -> dict[str, Any]:
        return self._obj("parameters")

    @property
    def environment(self) -> dict[str, Any]:
        return self._obj("environment")


class Completeness(JSONView):
    """v0.1 / v0.2 `metadata.completeness` claims (v0.1 says `arguments`, v0.2 `parameters`)."""

    __slots__ = ()
    _KNOWN = frozenset({"parameters", "arguments", "environment", "materials"})

    @property
    def parameters(self) -> bool | None:
        return _flag(self._raw, "parameters")

    @property
    def arguments(self) -> bool | None:
        return _flag(self._raw, "arguments")

    @property
    def environment(self) -> bool | None:
        return _flag(self._raw, "environment")

    @property
    def materials(self) -> bool | None:
        return _flag(self._raw, "materials")


class LegacyMetadata(JSONView):
    """v0.1 / v0.2 `metadata`."""

    __slots__ = ()
    _KNOWN = frozenset(
        {"buildInvocationId", "buildStartedOn", "buildFinishedOn", "completeness", "reproducible"}
    )

    @property
    def build_invocation_id(self) -> str | None:
        return self._str("buildInvocationId")

    @property
    def build_started_on(self) -> str | None:
        return self._str("buildStartedOn")

    @property
    def build_finished_on(self) -> str | None:
        return self._str("buildFinishedOn")

    @property
    def completeness(self) -> Completeness:
        return self._view("completeness", Completeness) or Completeness._wrap({})

    @property
    def reproducible(self) -> bool | None:
        return _flag(self._raw, "reproducible")


class _BuilderRef(JSONView):
    """v0.1 / v0.2 `builder`: only `id`."""

    __slots__ = ()
    _KNOWN = frozenset({"id"})

    @property
    def id(self) -> str | None:
        return self._str("id")


class ProvenanceV02(JSONView):
    """Predicate of `https://slsa.dev/provenance/v0.2`."""

    __slots__ = ()
    _KNOWN = frozenset(
        {"builder", "buildType", "invocation", "buildConfig", "metadata", "materials"}
    )

    @property
    def builder_id(self) -> str | None:
        builder = self._view("builder", _BuilderRef)
        return builder.id if builder else None

    @property
    def build_type(self) -> str | None:
        return self._str("buildType")

    @property
    def invocation(self) -> Invocation:
        return self._view("invocation", Invocation) or Invocation._wrap({})

    @property
    def build_config(self) -> dict[str, Any] | None:
        value = self._raw.get("buildConfig")
        return value if isinstance(value, dict) else None

    @property
    def metadata(self) -> LegacyMetadata:
        return self._view("metadata", LegacyMetadata) or LegacyMetadata._wrap({})

    @property
    def materials(self) -> tuple[Material, ...]:
        return self._views("materials", Material)


class Recipe(JSONView):
    """v0.1 `recipe`."""

    __slots__ = ()
    _KNOWN = frozenset({"type", "definedInMaterial", "entryPoint", "arguments", "environment"})

    @property
    def type(self) -> str | None:
        return self._str("type")

    @property
    def defined_in_material(self) -> int | None:
        value = self._raw.get("definedInMaterial")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def entry_point(self) -> str | None:
        return self._str("entryPoint")

    @property
    def arguments(self) -> dict[str, Any]:
        return self._obj("arguments")

    @property
    def environment(self) -> dict[str, Any]:
        return self._obj("environment")


class ProvenanceV01(JSONView):
    """Predicate of `https://slsa.dev/provenance/v0.1`."""

    __slots__ = ()
    _KNOWN = frozenset({"builder", "recipe", "metadata", "materials"})

    @property
    def builder_id(self) -> str | None:
        builder = self._view("builder", _BuilderRef)
        return builder.id if builder else None

    @property
    def recipe(self) -> Recipe | None:
        """None when unset or null (allowed, though discouraged)."""
        return self._view("recipe", Recipe)

    @property
    def metadata(self) -> LegacyMetadata:
        return self._view("metadata", LegacyMetadata) or LegacyMetadata._wrap({})

    @property
    def materials(self) -> tuple[Material, ...]:
        return self._views("materials", Material)
