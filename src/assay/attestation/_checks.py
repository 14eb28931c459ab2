"""Rule primitives shared by the validators: types, digests, timestamps, descriptors.

Each check appends `Finding`s to `out` and never raises. Paths are only formatted
when something is wrong, which keeps validation of a good document cheap.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final, Literal

from assay.attestation._json import child, type_name
from assay.attestation.findings import Finding, Severity

ERROR: Final = Severity.ERROR
WARNING: Final = Severity.WARNING

ExtensionStyle = Literal["vendor", "uri"]
"""How extension fields are named: `<vendor>_<field>` (v1) or a URI (v0.1, v0.2, VSA)."""

# Lengths of lowercase-hex digests for the algorithms the in-toto DigestSet spec names.
HEX_LENGTHS: Final[dict[str, tuple[int, ...]]] = {
    "md5": (32,),
    "sha1": (40,),
    "sha224": (56,),
    "sha256": (64,),
    "sha384": (96,),
    "sha512": (128,),
    "sha512_224": (56,),
    "sha512_256": (64,),
    "sha3_224": (56,),
    "sha3_256": (64,),
    "sha3_384": (96,),
    "sha3_512": (128,),
    "shake128": (64,),
    "shake256": (128,),
    "blake2b": (128,),
    "blake2s": (64,),
    "ripemd160": (40,),
    "sm3": (64,),
    "gost": (64,),
    "gitBlob": (40, 64),
    "gitCommit": (40, 64),
    "gitTag": (40, 64),
    "gitTree": (40, 64),
    "dirHash": (64,),
}
LOWER_HEX: Final = "0123456789abcdef"

# <YYYY>-<MM>-<DD>T<hh>:<mm>:<ss>Z; fractional seconds are tolerated (the spec's own
# examples use them), offsets other than Z are not.
TIMESTAMP: Final = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"T(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d{1,9})?Z"
)
URI_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_VENDOR_EXTENSION: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-]*_[A-Za-z0-9][A-Za-z0-9_]*")


def add(out: list[Finding], path: str, code: str, severity: Severity, message: str) -> None:
    out.append(Finding(path, code, severity, message))


def wrong_type(out: list[Finding], path: str, expected: str, value: Any) -> None:
    add(out, path, "wrong-type", ERROR, f"expected {expected}, found {type_name(value)}")


def missing(out: list[Finding], path: str, what: str, severity: Severity = ERROR) -> None:
    add(out, path, "missing-field", severity, f"expected {what}, found nothing")


def present(
    out: list[Finding], value: Any, kind: type, path: str, *, expected: str, what: str
) -> bool:
    """True if `value` is a `kind`; else reports it missing (None) or of the wrong type."""
    if isinstance(value, kind):
        return True
    if value is None:
        missing(out, path, what)
    else:
        wrong_type(out, path, expected, value)
    return False


def objects(
    out: list[Finding], items: list[Any], path: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each object of an array with its path; an entry that is no object is reported."""
    for index, item in enumerate(items):
        where = f"{path}[{index}]"
        if isinstance(item, dict):
            yield where, item
        else:
            wrong_type(out, where, "an object", item)


def unset(
    out: list[Finding],
    obj: dict[str, Any],
    key: str,
    path: str,
    *,
    code: str,
    severity: Severity,
    what: str,
) -> None:
    """Reports `key` of `obj` when it is unset, null or empty: `what` was expected."""
    if is_empty(obj.get(key)):
        add(out, child(path, key), code, severity, f"expected {what}, found nothing")


def is_empty(value: Any) -> bool:
    """Unset, null and empty read alike (provenance v1 parsing rule)."""
    return value is None or value in ("", {}, [])


def required_str(
    out: list[Finding], obj: dict[str, Any], key: str, path: str, *, uri: bool = False
) -> str | None:
    value = obj.get(key)
    if isinstance(value, str) and value:
        if uri and URI_SCHEME.match(value) is None:
            add(
                out,
                child(path, key),
                "not-a-uri",
                WARNING,
                f"expected a URI with a scheme, found {value!r}",
            )
        return value
    not_a_string(out, child(path, key), value, "a non-empty string")
    return None


def not_a_string(out: list[Finding], path: str, value: Any, wanted: str) -> None:
    """Reports a value that should have been a non-empty string (`wanted` says which):
    missing when it is empty, else of the wrong type."""
    if is_empty(value):
        missing(out, path, wanted)
    else:
        wrong_type(out, path, "a string", value)


def optional_str(out: list[Finding], obj: dict[str, Any], key: str, path: str) -> None:
    value = obj.get(key)
    if not isinstance(value, str | None):
        wrong_type(out, child(path, key), "a string", value)


def optional_bool(out: list[Finding], obj: dict[str, Any], key: str, path: str) -> None:
    value = obj.get(key)
    if not isinstance(value, bool | None):
        wrong_type(out, child(path, key), "a boolean", value)


def optional_object(out: list[Finding], obj: dict[str, Any], key: str, path: str) -> bool:
    """True if the field is a (possibly empty) object; null and unset pass silently."""
    value = obj.get(key)
    if isinstance(value, dict):
        return True
    if value is not None:
        wrong_type(out, child(path, key), "an object", value)
    return False


def string_map(out: list[Finding], obj: dict[str, Any], key: str, path: str) -> None:
    """An optional object whose values are all strings (e.g. `builder.version`)."""
    if optional_object(out, obj, key, path):
        for name, value in obj[key].items():
            if not isinstance(value, str):
                wrong_type(out, child(child(path, key), name), "a string", value)


def timestamp(out: list[Finding], obj: dict[str, Any], key: str, path: str) -> None:
    value = obj.get(key)
    if value in (None, ""):
        return
    if not isinstance(value, str):
        wrong_type(out, child(path, key), "a timestamp string", value)
    elif TIMESTAMP.fullmatch(value) is None:
        add(
            out,
            child(path, key),
            "timestamp-format",
            ERROR,
            f"expected <YYYY>-<MM>-<DD>T<hh>:<mm>:<ss>Z in UTC, found {value!r}",
        )


def _algorithm_digest(out: list[Finding], parent: str, algorithm: str, digest: str) -> None:
    """One digest string of a set: lowercase hex of a known length, or any non-empty text."""
    lengths = HEX_LENGTHS.get(algorithm)
    if lengths is None:
        if not digest:
            add(out, child(parent, algorithm), "digest-empty", ERROR, "expected a digest, found ''")
    elif digest.strip(LOWER_HEX):
        found = "uppercase hex" if not digest.lower().strip(LOWER_HEX) else repr(digest)
        add(
            out,
            child(parent, algorithm),
            "digest-not-hex",
            ERROR,
            f"expected lowercase hex for {algorithm}, found {found}",
        )
    elif len(digest) not in lengths:
        want = " or ".join(str(n) for n in lengths)
        add(
            out,
            child(parent, algorithm),
            "digest-length",
            ERROR,
            f"expected {want} hex characters for {algorithm}, found {len(digest)}",
        )


def digest_set(out: list[Finding], value: Any, path: str) -> None:
    """Lowercase hex of the right length for known algorithms; other keys pass."""
    if not isinstance(value, dict):
        wrong_type(out, path, "a digest set (object)", value)
        return
    if not value:
        add(out, path, "digest-empty", ERROR, "expected at least one digest, found none")
        return
    for algorithm, digest in value.items():
        if isinstance(digest, str):
            _algorithm_digest(out, path, algorithm, digest)
        else:
            wrong_type(out, child(path, algorithm), "a digest string", digest)


def extension(
    out: list[Finding], name: object, path: str, style: ExtensionStyle, where: str
) -> None:
    """A field `where` does not define: fine if named as an extension, else a warning."""
    # Only Python callers can build non-string keys; JSON cannot.
    key = name if isinstance(name, str) else repr(name)
    if style == "vendor":
        if "_" not in key:
            add(
                out,
                child(path, key),
                "unknown-field",
                WARNING,
                f"expected a field of {where} or a <vendor>_<field> extension, found {key!r}"
                " (consumers ignore it)",
            )
        elif _VENDOR_EXTENSION.fullmatch(key) is None:
            add(
                out,
                child(path, key),
                "extension-name",
                WARNING,
                f"expected an extension named <vendor>_<field>, found {key!r}",
            )
    elif URI_SCHEME.match(key) is None:
        add(
            out,
            child(path, key),
            "unknown-field",
            WARNING,
            f"expected a field of {where} or a URI-named extension, found {key!r}"
            " (consumers ignore it)",
        )


def extensions(
    out: list[Finding],
    obj: dict[str, Any],
    known: frozenset[str],
    path: str,
    style: ExtensionStyle,
    *,
    where: str,
) -> None:
    if known.issuperset(obj):
        return  # the common case, checked in C
    for key in obj:
        if key not in known:
            extension(out, key, path, style, where)


DESCRIPTOR_FIELDS: Final = frozenset(
    {"uri", "digest", "name", "downloadLocation", "mediaType", "content", "annotations"}
)


def _descriptor_string(out: list[Finding], item: Any, parent: str, key: str) -> None:
    if item is not None and item.__class__ is not str:
        wrong_type(out, child(parent, key), "a string", item)


def _descriptor_content(out: list[Finding], item: Any, parent: str, key: str) -> None:
    if item in (None, ""):
        return
    if item.__class__ is not str:
        wrong_type(out, child(parent, key), "base64 text", item)
    elif not _is_base64(item):
        add(
            out,
            child(parent, key),
            "content-not-base64",
            ERROR,
            "expected base64 text, found other text",
        )


def _descriptor_annotations(out: list[Finding], item: Any, parent: str, key: str) -> None:
    if item is not None and item.__class__ is not dict:
        wrong_type(out, child(parent, key), "an object", item)


def _descriptor_digest_later(out: list[Finding], item: Any, parent: str, key: str) -> None:
    """The digest is checked after the other fields, against `require_digest`."""


_DESCRIPTOR_CHECKS: Final = {
    "uri": _descriptor_string,
    "name": _descriptor_string,
    "downloadLocation": _descriptor_string,
    "mediaType": _descriptor_string,
    "digest": _descriptor_digest_later,
    "content": _descriptor_content,
    "annotations": _descriptor_annotations,
}


def _descriptor_digest(
    out: list[Finding], digest: Any, path: str, require_digest: str | None
) -> None:
    if digest is not None and digest != {}:
        digest_set(out, digest, child(path, "digest"))
    elif require_digest:
        add(
            out,
            child(path, "digest"),
            require_digest,
            ERROR,
            "expected a digest set, found nothing",
        )


def _descriptor_fields(
    out: list[Finding], value: dict[str, Any], path: str, style: ExtensionStyle
) -> None:
    """Each field by its check; a field a descriptor does not have, as an extension."""
    # One pass over the fields: a typical descriptor has two or three.
    for key, item in value.items():
        check = _DESCRIPTOR_CHECKS.get(key)
        if check is None:
            extension(out, key, path, style, "a resource descriptor")
        else:
            check(out, item, path, key)


def descriptor(
    out: list[Finding],
    value: Any,
    path: str,
    style: ExtensionStyle,
    *,
    require_digest: str | None = None,
) -> bool:
    """A ResourceDescriptor: one of uri, digest or content; digests well formed.

    `require_digest` names the code to report when the digest is absent (subjects,
    input attestations). Returns False if `value` is not an object.
    """
    if not isinstance(value, dict):
        add(
            out,
            path,
            "not-object",
            ERROR,
            f"expected a resource descriptor (object), found {type_name(value)}",
        )
        return False
    _descriptor_fields(out, value, path, style)
    _descriptor_digest(out, value.get("digest"), path, require_digest)
    if not require_digest and all(is_empty(value.get(k)) for k in ("uri", "digest", "content")):
        add(
            out,
            path,
            "descriptor-empty",
            ERROR,
            "expected at least one of uri, digest or content, found none",
        )
    return True


def descriptor_list(
    out: list[Finding], obj: dict[str, Any], key: str, path: str, style: ExtensionStyle
) -> None:
    """An optional array of ResourceDescriptors (unset, null and empty pass)."""
    value = obj.get(key)
    if value is None or value == []:
        return
    where = child(path, key)
    if not isinstance(value, list):
        wrong_type(out, where, "an array of resource descriptors", value)
        return
    for index, item in enumerate(value):
        _listed_descriptor(out, item, f"{where}[{index}]", style)


def _listed_descriptor(out: list[Finding], item: Any, where: str, style: ExtensionStyle) -> None:
    if item is not None and item != {}:
        descriptor(out, item, where, style)
        return
    # Unset, null and empty read alike: an empty entry describes nothing.
    add(
        out,
        where,
        "descriptor-empty",
        WARNING,
        "expected at least one of uri, digest or content, found an empty entry",
    )


_BASE64_CHARS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"


def _is_base64(text: str) -> bool:
    stripped = text.rstrip("=")
    return (
        not stripped.strip(_BASE64_CHARS)
        and len(text) - len(stripped) <= 2
        and len(stripped) % 4 != 1
    )


def is_uri(text: str) -> bool:
    return URI_SCHEME.match(text) is not None
