"""A fast path for the common case: a provenance v1 statement with nothing to report.

`validate()` first asks `clean_provenance_v1()`; only when it says no does the detailed
validator run and explain why. The fast path may say no to a clean document (it then
costs one detailed run) but must never say yes to a document with any finding: the
property tests hold it to that. It is a handful of flat functions, one per part of the
statement, with no allocation beyond the subject names: most statements in the wild are
clean provenance v1, so this path must stay cheap.
"""

from __future__ import annotations

from typing import Any, Final

from assay.attestation._checks import HEX_LENGTHS, LOWER_HEX, TIMESTAMP, URI_SCHEME
from assay.attestation.constants import PROVENANCE_V1, STATEMENT_V1

_STATEMENT: Final = frozenset({"_type", "subject", "predicateType", "predicate"})
_PREDICATE: Final = frozenset({"buildDefinition", "runDetails"})
_DEFINITION: Final = frozenset(
    {"buildType", "externalParameters", "internalParameters", "resolvedDependencies"}
)
_RUN: Final = frozenset({"builder", "metadata", "byproducts"})
_BUILDER: Final = frozenset({"id", "builderDependencies", "version"})
_METADATA: Final = frozenset({"invocationId", "startedOn", "finishedOn"})
# Descriptors with `content` or extension fields take the detailed path.
# A descriptor's fields and the type each has when not null (a digest's content is
# checked by _digests).
_DESCRIPTOR: Final[dict[str, type]] = {
    "uri": str,
    "digest": dict,
    "name": str,
    "downloadLocation": str,
    "mediaType": str,
    "annotations": dict,
}
_URI_CACHE_SIZE: Final = 4096
_URIS: dict[str, bool] = {}


def _digests(value: Any) -> bool:
    if value.__class__ is not dict or not value:
        return False
    for algorithm, digest in value.items():
        if digest.__class__ is not str:
            return False
        lengths = HEX_LENGTHS.get(algorithm)
        if lengths is None:
            if not digest:
                return False
        elif digest.strip(LOWER_HEX) or len(digest) not in lengths:
            return False
    return True


def _descriptor(value: Any, *, digest_required: bool) -> bool:
    if value.__class__ is not dict:
        return False
    for key, item in value.items():  # inline, not a call per field: this is the hot loop
        kind = _DESCRIPTOR.get(key)  # None for a field a descriptor does not have
        if kind is None or (item is not None and item.__class__ is not kind):
            return False
    digest = value.get("digest")
    if digest is None or digest == {}:
        return not digest_required and bool(value.get("uri"))
    return _digests(digest)


def _descriptors(value: Any) -> bool:
    if value is None:
        return True
    if value.__class__ is not list:
        return False
    for item in value:  # noqa: SIM110 - a plain loop is cheaper than all() over a generator
        if not _descriptor(item, digest_required=False):
            return False
    return True


def _is_uri(text: Any) -> bool:
    """`URI_SCHEME.match`, remembered: builder ids and build types repeat across statements."""
    if text.__class__ is not str:
        return False
    known = _URIS.get(text)
    if known is None:
        known = URI_SCHEME.match(text) is not None
        if len(_URIS) >= _URI_CACHE_SIZE:
            _URIS.clear()
        _URIS[text] = known
    return known


def _timestamp(value: Any) -> bool:
    if value is None or value == "":
        return True
    return value.__class__ is str and TIMESTAMP.fullmatch(value) is not None


def _subjects(subjects: Any) -> bool:
    if subjects.__class__ is not list or not subjects:
        return False
    names: set[str] = set()
    for subject in subjects:
        if not _descriptor(subject, digest_required=True):
            return False
        name = subject.get("name")
        if name:
            if name in names:
                return False
            names.add(name)
    return True


def _object_within(value: Any, allowed: frozenset[str]) -> bool:
    return value.__class__ is dict and allowed.issuperset(value)


def _build_definition(definition: Any) -> bool:
    if not _object_within(definition, _DEFINITION) or not _is_uri(definition.get("buildType")):
        return False
    external = definition.get("externalParameters")
    if external.__class__ is not dict or not external:
        return False
    internal = definition.get("internalParameters")
    if internal is not None and (
        internal.__class__ is not dict or not internal.keys().isdisjoint(external)
    ):
        return False
    return _descriptors(definition.get("resolvedDependencies"))


def _builder(builder: Any) -> bool:
    if not _object_within(builder, _BUILDER) or not _is_uri(builder.get("id")):
        return False
    if not _descriptors(builder.get("builderDependencies")):
        return False
    version = builder.get("version")
    return version is None or (
        version.__class__ is dict and all(item.__class__ is str for item in version.values())
    )


def _run_metadata(metadata: Any) -> bool:
    if metadata is None:
        return True
    if not _object_within(metadata, _METADATA):
        return False
    invocation = metadata.get("invocationId")
    if invocation is not None and invocation.__class__ is not str:
        return False
    return _timestamp(metadata.get("startedOn")) and _timestamp(metadata.get("finishedOn"))


def _run_details(run: Any) -> bool:
    return (
        _object_within(run, _RUN)
        and _builder(run.get("builder"))
        and _run_metadata(run.get("metadata"))
        and _descriptors(run.get("byproducts"))
    )


def clean_provenance_v1(raw: dict[str, Any]) -> bool:
    """True only if `validate(raw)` would return no finding at all."""
    if (
        raw.get("_type") != STATEMENT_V1
        or raw.get("predicateType") != PROVENANCE_V1
        or not _STATEMENT.issuperset(raw)
        or not _subjects(raw.get("subject"))
    ):
        return False
    predicate: Any = raw.get("predicate")
    return (
        _object_within(predicate, _PREDICATE)
        and _build_definition(predicate.get("buildDefinition"))
        and _run_details(predicate.get("runDetails"))
    )
