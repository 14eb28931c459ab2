"""Read a policy file (YAML or JSON) into `Policy`, naming the path of every error."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from assay import _yaml_strict
from assay._json_strict import first_problem, type_name
from assay.attestation import loads_strict
from assay.errors import AttestationError, InputError
from assay.keys import MAX_PEM_BYTES, PublicKey, load_public_key
from assay.policy.model import (
    DEFAULT_LEVEL,
    MAX_LEVEL,
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    BuilderRule,
    DependencyRule,
    ParameterRules,
    Policy,
    Signer,
    SourceRule,
    VsaSigner,
)
from assay.policy.parameters import apply_parameters
from assay.policy.refs import is_commit_digest, parse_semver
from assay.policy.vulnerabilities import (
    VulnerabilityRule,
    evidence_signer_names,
    parse_vulnerability_rule,
)

if TYPE_CHECKING:
    from assay.policy.identity import IdentityRule

MAX_POLICY_BYTES: Final = 1024 * 1024
MAX_POLICY_DEPTH: Final = 32


MAX_LIST_ITEMS: Final = 1000

_PINS: Final = ("any", "none", "release-tag", "version", "commit")
_TOP: Final = {
    "version",
    "uri",
    "resourceUri",
    "signers",
    "vsaSigners",
    "buildTypes",
    "predicateTypes",
    "externalParameters",
    "source",
    "minimumLevel",
    "dependencies",
    "description",
    "vulnerabilities",
}
_KNOWN_PREDICATES: Final = (PROVENANCE_V1, PROVENANCE_V02, PROVENANCE_V01)

T = TypeVar("T")


class PolicyError(InputError):
    """A policy file is malformed; `where` is `file: $.json.path`."""


class _Reader:
    def __init__(self, origin: str, base_dir: Path | None) -> None:
        self.origin = origin
        self.base_dir = base_dir
        self.evidence_signers: frozenset[object] = frozenset()
        """Signers the `vulnerabilities:` rule names for VEX or scan attestations: they
        may vouch for no builder."""

    def fail(self, path: str, message: str) -> PolicyError:
        return PolicyError(f"{self.origin}: {path}", message)

    def mapping(self, value: object, path: str, allowed: set[str]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        unknown = sorted(str(k) for k in value if k not in allowed)
        if unknown:
            raise self.fail(
                f"{path}.{unknown[0]}",
                f"unknown field; expected one of {', '.join(sorted(allowed))}",
            )
        return value

    def string(self, value: object, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, f"expected a non-empty string, got {_kind(value)}")
        return value

    def optional_string(self, data: Mapping[str, Any], key: str, path: str) -> str | None:
        return None if data.get(key) is None else self.string(data[key], f"{path}.{key}")

    def check(self, rules: Iterable[tuple[bool, str, str]]) -> None:
        """Fail with the first rule broken: (broken, path, message)."""
        for broken, path, message in rules:
            if broken:
                raise self.fail(path, message)

    def some_items(
        self, value: object, path: str, read: Callable[[object, str], T], missing: str
    ) -> tuple[T, ...]:
        """`items` that must not be empty (`missing` says what was expected)."""
        found = self.items(value, path, read)
        if not found:
            raise self.fail(path, missing)
        return found

    def items(self, value: object, path: str, read: Callable[[object, str], T]) -> tuple[T, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array, got {_kind(value)}")
        if len(value) > MAX_LIST_ITEMS:
            raise self.fail(path, f"expected at most {MAX_LIST_ITEMS} items, got {len(value)}")
        return tuple(read(item, f"{path}[{index}]") for index, item in enumerate(value))

    def level(self, value: object, path: str, default: int) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LEVEL:
            raise self.fail(path, f"expected a build level 0..{MAX_LEVEL}, got {value!r}")
        return value

    def positive(self, value: object, path: str) -> int:
        if value is None:
            return 1
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(path, f"expected an integer of at least 1, got {value!r}")
        return value

    def regex(self, value: object, path: str) -> re.Pattern[str]:
        text = self.string(value, path)
        try:
            return re.compile(text)
        except re.error as error:
            raise self.fail(path, f"expected a regular expression: {error}") from None

    def key(self, value: object, path: str) -> PublicKey:
        if isinstance(value, Mapping):
            return self.key_entry(value, path)
        text = self.string(value, path)
        if "-----BEGIN" in text:
            return load_public_key(text.encode(), where=f"{self.origin}: {path}")
        return self.key_file(text, path)

    def key_entry(self, value: Mapping[str, Any], path: str) -> PublicKey:
        """`{key, keyid}`: a key with the id signatures name it by."""
        entry = self.mapping(value, path, {"key", "keyid"})
        key = self.key(entry.get("key"), f"{path}.key")
        keyid = self.optional_string(entry, "keyid", path)
        return PublicKey(
            key.key,
            keyid=keyid or key.keyid,
            rsa_scheme=key.rsa_scheme,
            intoto_keyid=key.intoto_keyid,
        )

    def key_file(self, text: str, path: str) -> PublicKey:
        """A PEM key file, relative to the policy file's directory."""
        file = Path(text)
        if not file.is_absolute() and self.base_dir is not None:
            file = self.base_dir / file
        try:
            if file.stat().st_size > MAX_PEM_BYTES:
                raise self.fail(path, f"key file {file} is larger than {MAX_PEM_BYTES} bytes")
            data = file.read_bytes()
        except OSError as error:
            raise self.fail(path, f"cannot read key file {file}: {error.strerror}") from None
        return load_public_key(data, where=f"{self.origin}: {path} ({file})")

    # -- sections ---------------------------------------------------------------------

    def builder(self, value: object, path: str) -> BuilderRule:
        data = self.mapping(
            value, path, {"id", "idPattern", "pin", "versions", "commits", "maxLevel", "buildTypes"}
        )
        builder_id = self.optional_string(data, "id", path)
        pattern = (
            self.regex(data["idPattern"], f"{path}.idPattern") if "idPattern" in data else None
        )
        if (builder_id is None) == (pattern is None):
            raise self.fail(path, "expected exactly one of id or idPattern")
        versions = self.items(data.get("versions"), f"{path}.versions", self.string)
        commits = self.items(data.get("commits"), f"{path}.commits", self.string)
        self.check(
            (
                not is_commit_digest(commit),
                f"{path}.commits[{index}]",
                f"expected a full lower-case commit digest, got {commit!r}",
            )
            for index, commit in enumerate(commits)
        )
        pin = self.optional_string(data, "pin", path) or _default_pin(versions, commits)
        self.check(
            (
                (
                    pin not in _PINS,
                    f"{path}.pin",
                    f"expected one of {', '.join(_PINS)}, got {pin!r}",
                ),
                (
                    pin == "version" and not versions,
                    f"{path}.versions",
                    "pin 'version' needs a non-empty versions list",
                ),
                (
                    pin == "commit" and not commits,
                    f"{path}.commits",
                    "pin 'commit' needs a non-empty commits list",
                ),
            )
        )
        return BuilderRule(
            builder_id,
            pattern,
            pin,
            versions,
            commits,
            self.level(data.get("maxLevel"), f"{path}.maxLevel", DEFAULT_LEVEL),
            self.items(data.get("buildTypes"), f"{path}.buildTypes", self.string),
        )

    def signer(self, value: object, path: str) -> Signer:
        data = self.mapping(
            value,
            path,
            {"name", "publicKeys", "threshold", "builders", "legacyRawPayload", "identity"},
        )
        identity = self.identity(data.get("identity"), f"{path}.identity")
        keys = self.items(data.get("publicKeys"), f"{path}.publicKeys", self.key)
        self.check(
            (
                (
                    not keys and identity is None,
                    f"{path}.publicKeys",
                    "expected at least one public key (or an identity)",
                ),
                (
                    bool(keys) and identity is not None,
                    path,
                    "expected publicKeys or identity, not both",
                ),
            )
        )
        threshold = self.positive(data.get("threshold"), f"{path}.threshold")
        if keys and threshold > len(keys):
            raise self.fail(
                f"{path}.threshold",
                f"expected at most {len(keys)} (the number of keys), got {threshold}",
            )
        builders = self.items(data.get("builders"), f"{path}.builders", self.builder)
        if not builders and data.get("name") not in self.evidence_signers:
            # Without builders a signer would vouch for nothing: almost certainly a mistake.
            raise self.fail(
                f"{path}.builders", "expected at least one builder this signer vouches for"
            )
        raw = self.boolean(data.get("legacyRawPayload", False), f"{path}.legacyRawPayload")
        name = self.optional_string(data, "name", path) or path
        return Signer(name, keys, builders, threshold, raw, identity)

    def boolean(self, value: object, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, got {value!r}")
        return value

    def identity(self, value: object, path: str) -> IdentityRule | None:
        from assay.policy.identity import IdentityRule

        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        try:
            return IdentityRule.from_mapping(
                {str(k): v for k, v in value.items()}, f"{self.origin}: {path}"
            )
        except AttestationError as error:
            raise PolicyError(error.where, error.reason) from None

    def vsa_signer(self, value: object, path: str) -> VsaSigner:
        data = self.mapping(value, path, {"name", "publicKeys", "threshold", "verifierIds"})
        keys = self.some_items(
            data.get("publicKeys"),
            f"{path}.publicKeys",
            self.key,
            "expected at least one public key",
        )
        ids = self.some_items(
            data.get("verifierIds"),
            f"{path}.verifierIds",
            self.string,
            "expected at least one verifier id",
        )
        threshold = self.positive(data.get("threshold"), f"{path}.threshold")
        name = self.optional_string(data, "name", path) or path
        return VsaSigner(name, keys, ids, threshold)

    def parameters(self, value: object, path: str) -> ParameterRules:
        if value is None:
            return ParameterRules()
        data = self.mapping(value, path, {"exact", "allowed", "patterns", "allowUnknown"})
        exact = dict(self.mapping(data.get("exact") or {}, f"{path}.exact", _AnyKey()))
        allowed_raw = self.mapping(data.get("allowed") or {}, f"{path}.allowed", _AnyKey())
        allowed = {
            str(key): self.options(options, f"{path}.allowed.{key}")
            for key, options in allowed_raw.items()
        }
        patterns_raw = self.mapping(data.get("patterns") or {}, f"{path}.patterns", _AnyKey())
        patterns = {str(k): self.regex(v, f"{path}.patterns.{k}") for k, v in patterns_raw.items()}
        unknown = self.items(data.get("allowUnknown"), f"{path}.allowUnknown", self.string)
        return ParameterRules(exact, allowed, patterns, unknown)

    def options(self, value: object, path: str) -> tuple[Any, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(path, f"expected a non-empty array, got {_kind(value)}")
        return tuple(value)

    def source(self, value: object, path: str) -> SourceRule:
        if value is None:
            return SourceRule()
        data = self.mapping(
            value, path, {"repository", "branch", "tag", "versionedTag", "workflowInputs"}
        )
        repository = self.optional_string(data, "repository", path)
        versioned = self.optional_string(data, "versionedTag", path)
        refs = [k for k in ("branch", "tag", "versionedTag") if data.get(k) is not None]
        self.check(
            (
                (
                    versioned is not None and parse_semver(versioned) is None,
                    f"{path}.versionedTag",
                    f"expected a semantic version such as v1.2 (vX[.Y[.Z]]), got {versioned!r}",
                ),
                (
                    len(refs) > 1,
                    path,
                    f"expected at most one of branch, tag, versionedTag, got {refs}",
                ),
            )
        )
        inputs_raw = self.mapping(
            data.get("workflowInputs") or {}, f"{path}.workflowInputs", _AnyKey()
        )
        inputs = {str(k): str(v) for k, v in inputs_raw.items()}
        return SourceRule(
            # Kept as written: its scheme and `@ref`, when given, are compared too.
            repository.strip().rstrip("/") if repository else None,
            self.optional_string(data, "branch", path),
            self.optional_string(data, "tag", path),
            versioned,
            inputs,
        )

    def dependencies(self, value: object, path: str) -> DependencyRule | None:
        if value is None:
            return None
        data = self.mapping(value, path, {"minimumLevel", "exceptions"})
        return DependencyRule(
            self.level(data.get("minimumLevel"), f"{path}.minimumLevel", 0),
            self.items(data.get("exceptions"), f"{path}.exceptions", self.string),
        )


def _default_pin(versions: tuple[str, ...], commits: tuple[str, ...]) -> str:
    """What a builder's lists pin it to when it names no pin."""
    if versions:
        return "version"
    return "commit" if commits else "any"


class _AnyKey(set[str]):
    """An `allowed` set for free-form maps: every key is allowed."""

    def __contains__(self, item: object) -> bool:
        return True


def _kind(value: object) -> str:
    """What a value is, for messages (a number or a string shown as itself)."""
    if isinstance(value, str):
        return f"the string {value!r}" if value else "an empty string"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"the number {value}"
    name = "object" if isinstance(value, Mapping) else type_name(value)
    return _WITH_ARTICLE.get(name, name)


_WITH_ARTICLE: Final = {"boolean": "a boolean", "array": "an array", "object": "an object"}


def parse_policy(
    data: bytes,
    *,
    source: str = "policy",
    base_dir: Path | None = None,
    uri: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> Policy:
    """Build a `Policy` from the bytes of a YAML or JSON file.

    Relative key paths are resolved against `base_dir`. The policy digest is the
    SHA-256 of `data`, so a VSA names exactly the bytes that were applied; `parameters`
    are the values of the policy's declared parameters (`assay.policy.parameters`), kept
    in `Policy.arguments`.
    """
    parsed, arguments = _with_parameters(_read_document(data, source), parameters or {}, source)
    reader = _Reader(source, base_dir)
    reader.evidence_signers = evidence_signer_names(
        parsed.get("vulnerabilities") if isinstance(parsed, Mapping) else None
    )
    top = reader.mapping(parsed, "$", _TOP)
    version = top.get("version", 1)
    reader.check([(version != 1, "$.version", f"expected 1, got {version!r}")])
    signers = reader.some_items(
        top.get("signers"), "$.signers", reader.signer, "expected at least one trusted signer"
    )
    build_types = reader.some_items(
        top.get("buildTypes"),
        "$.buildTypes",
        reader.string,
        "expected at least one accepted buildType",
    )
    predicate_types = _predicate_types(reader, top.get("predicateTypes"))
    digest = hashlib.sha256(data).hexdigest()
    return Policy(
        uri=reader.optional_string(top, "uri", "$") or uri or source,
        digest={"sha256": digest},
        signers=signers,
        build_types=build_types,
        predicate_types=predicate_types or (PROVENANCE_V1, PROVENANCE_V02),
        parameters=reader.parameters(top.get("externalParameters"), "$.externalParameters"),
        source=reader.source(top.get("source"), "$.source"),
        minimum_level=reader.level(top.get("minimumLevel"), "$.minimumLevel", DEFAULT_LEVEL),
        dependencies=reader.dependencies(top.get("dependencies"), "$.dependencies"),
        vsa_signers=reader.items(top.get("vsaSigners"), "$.vsaSigners", reader.vsa_signer),
        resource_uri=reader.optional_string(top, "resourceUri", "$"),
        vulnerabilities=_vulnerabilities(
            top.get("vulnerabilities"), source, [s.name for s in signers]
        ),
        arguments=arguments,
    )


def _with_parameters(
    document: Any, parameters: Mapping[str, str], source: str
) -> tuple[Any, dict[str, str]]:
    """The document with its declared parameters applied (`assay.policy.parameters`), and
    the values applied."""
    try:
        return apply_parameters(document, parameters, source)
    except InputError as error:
        raise PolicyError(error.where, error.reason) from None


def _read_document(data: bytes, source: str) -> Any:
    """The policy file's YAML or JSON document, bounded in size and depth."""
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyError(source, f"expected at most {MAX_POLICY_BYTES} bytes, got {len(data)}")
    try:
        return _parse(data, source)
    except PolicyError:
        raise
    except InputError as error:
        raise _as_policy_error(error, source) from None


def _parse(data: bytes, source: str) -> Any:
    if not data.lstrip().startswith(b"{"):
        # No anchors or aliases, bounded depth, each key once (assay._yaml_strict).
        return _yaml_strict.load(data, source, max_depth=MAX_POLICY_DEPTH)
    parsed = loads_strict(data, where=source, limit=MAX_POLICY_BYTES)
    # The root is level 1 here, as in the YAML reader.
    if first_problem(parsed, MAX_POLICY_DEPTH - 1) is not None:
        raise PolicyError(source, f"expected nesting at most {MAX_POLICY_DEPTH} deep")
    return parsed


def _as_policy_error(error: InputError, source: str) -> PolicyError:
    """A JSON or YAML reader's error in the policy's words: either format was expected."""
    if not isinstance(error, AttestationError):  # the YAML reader's
        reason = error.reason.replace("expected YAML:", "expected YAML or JSON:", 1)
        return PolicyError(error.where, reason)
    reason = error.reason
    if "invalid JSON" in reason:
        reason = f"expected YAML or JSON: {reason}"
    return PolicyError(source, reason)


def _predicate_types(reader: _Reader, value: object) -> tuple[str, ...]:
    predicate_types = reader.items(value, "$.predicateTypes", reader.string)
    for index, predicate_type in enumerate(predicate_types):
        if predicate_type not in _KNOWN_PREDICATES:
            raise reader.fail(
                f"$.predicateTypes[{index}]",
                f"expected one of {', '.join(_KNOWN_PREDICATES)}, got {predicate_type!r}",
            )
    return predicate_types


def _vulnerabilities(value: object, source: str, signers: list[str]) -> VulnerabilityRule | None:
    if value is None:
        return None
    try:
        return parse_vulnerability_rule(value, "$.vulnerabilities", signers)
    except InputError as error:
        raise PolicyError(f"{source}: {error.where}", error.reason) from None


def load_policy(path: str | Path, parameters: Mapping[str, str] | None = None) -> Policy:
    """Read and parse a policy file (a path, or `builtin:NAME` for a shipped one); key
    paths in it are relative to the file; `parameters` for the ones it declares."""
    from assay.policy.builtin import resolve

    file = resolve(path)
    try:
        size = file.stat().st_size
        if size > MAX_POLICY_BYTES:
            raise PolicyError(str(file), f"expected at most {MAX_POLICY_BYTES} bytes, got {size}")
        data = file.read_bytes()
    except OSError as error:
        raise PolicyError(str(file), f"cannot read: {error.strerror}") from None
    return parse_policy(
        data,
        source=str(file),
        base_dir=file.parent,
        uri=file.resolve().as_uri(),
        parameters=parameters,
    )
