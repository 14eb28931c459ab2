"""Signing and verification keys: PEM in, `sign`/`verify` over bytes out.

Supported: Ed25519, ECDSA P-256/P-384/P-521 and RSA (PSS and PKCS#1 v1.5), as PEM
SubjectPublicKeyInfo public keys and PKCS#8 private keys (optionally encrypted with a
passphrase). The hash follows the key, as slsa-verifier and sigstore do: SHA-256 for
RSA and P-256, SHA-384 for P-384, SHA-512 for P-521; Ed25519 hashes internally.

ECDSA signatures are accepted DER-encoded or as raw `r || s` (IEEE P1363): the DSSE
spec's own test vector and real VSAs use the raw form.

    private = generate_private_key("ed25519")
    signer = PrivateKey(private)
    public = signer.public_key()
    assert public.verify(signer.sign(b"data"), b"data")
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field
from typing import Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from assay.errors import InputError
from assay.key_types import KeyType

MAX_PEM_BYTES: Final = 64 * 1024
"""A PEM key file larger than this is refused before parsing."""

MIN_RSA_BITS: Final = 2048

PublicKeyTypes = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey
PrivateKeyTypes = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey

_CURVE_HASH: Final[dict[str, type[hashes.HashAlgorithm]]] = {
    "secp256r1": hashes.SHA256,
    "secp384r1": hashes.SHA384,
    "secp521r1": hashes.SHA512,
}


class RsaScheme(enum.StrEnum):
    """RSA signature padding; `ANY` accepts either when verifying."""

    PSS = "pss"
    PKCS1V15 = "pkcs1v15"
    ANY = "any"


def _ecdsa_hash(curve: ec.EllipticCurve) -> hashes.HashAlgorithm:
    try:
        return _CURVE_HASH[curve.name]()
    except KeyError:
        raise InputError("key", f"expected curve P-256, P-384 or P-521, got {curve.name}") from None


def _spki_der(key: PublicKeyTypes) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def key_id(key: PublicKeyTypes) -> str:
    """assay's SPKI key id: hex SHA-256 of the DER SubjectPublicKeyInfo (`fingerprint`)."""
    return hashlib.sha256(_spki_der(key)).hexdigest()


def _canonical(value: object) -> str:
    # The canonical JSON of securesystemslib (OLPC): sorted keys, no spaces, and in
    # strings only `\` and `"` escaped.
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, int | None):  # (bool is an int: true, false)
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{_canonical(str(k))}:{_canonical(v)}" for k, v in items) + "}"
    raise TypeError(f"not canonical JSON: {type(value).__name__}")


def _sslib_fields(key: PublicKeyTypes, rsa_scheme: RsaScheme) -> dict[str, object]:
    # securesystemslib's key type, scheme and key value for a public key.
    if isinstance(key, ed25519.Ed25519PublicKey):
        raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"keytype": "ed25519", "scheme": "ed25519", "keyval": {"public": raw.hex()}}
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")
    if isinstance(key, ec.EllipticCurvePublicKey):
        bits = {"secp256r1": "256", "secp384r1": "384", "secp521r1": "521"}.get(
            key.curve.name, "256"
        )
        return {"keytype": "ecdsa", "scheme": f"ecdsa-sha2-nistp{bits}", "keyval": {"public": pem}}
    scheme = "rsa-pkcs1v15-sha256" if rsa_scheme is RsaScheme.PKCS1V15 else "rsassa-pss-sha256"
    return {"keytype": "rsa", "scheme": scheme, "keyval": {"public": pem}}


def intoto_key_metadata(
    key: PublicKeyTypes, rsa_scheme: RsaScheme = RsaScheme.ANY
) -> dict[str, object]:
    """The public-key dictionary older in-toto key files carry and compute key ids over."""
    fields = _sslib_fields(key, rsa_scheme)
    return {
        "keytype": fields["keytype"],
        "scheme": fields["scheme"],
        "keyid_hash_algorithms": ["sha256", "sha512"],
        "keyval": fields["keyval"],
    }


def intoto_key_id(metadata: dict[str, object]) -> str:
    """in-toto/securesystemslib key id: hex SHA-256 of the canonical JSON of the key."""
    return hashlib.sha256(_canonical(metadata).encode("utf-8")).hexdigest()


def sslib_key_id(key: PublicKeyTypes, rsa_scheme: RsaScheme = RsaScheme.PSS) -> str:
    """The key id securesystemslib computes by default (`SSlibKey.from_crypto`): the
    SHA-256 of the canonical JSON of key type, scheme and key value. assay writes it in
    the signatures it makes, so that securesystemslib and in-toto verify them as they are."""
    return intoto_key_id(_sslib_fields(key, rsa_scheme))


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A public key that verifies signatures over exact bytes; never raises on a bad signature."""

    key: PublicKeyTypes
    keyid: str = ""
    rsa_scheme: RsaScheme = RsaScheme.ANY
    intoto_keyid: str = ""
    """The in-toto/securesystemslib key id (SHA-256 of the canonical key JSON)."""
    # Worked out once, so that verifying costs little more than the signature check itself.
    _ecdsa: ec.ECDSA | None = field(default=None, init=False, repr=False, compare=False)
    _raw_size: int = field(default=0, init=False, repr=False, compare=False)
    _keyids: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.keyid:
            object.__setattr__(self, "keyid", sslib_key_id(self.key))
        if not self.intoto_keyid:
            metadata = intoto_key_metadata(self.key, self.rsa_scheme)
            object.__setattr__(self, "intoto_keyid", intoto_key_id(metadata))
        ids = {
            self.keyid,
            key_id(self.key),
            self.intoto_keyid,
            sslib_key_id(self.key, self.rsa_scheme),
        }
        object.__setattr__(self, "_keyids", frozenset(ids))
        if isinstance(self.key, rsa.RSAPublicKey) and self.key.key_size < MIN_RSA_BITS:
            raise InputError(
                "key",
                f"expected an RSA key of at least {MIN_RSA_BITS} bits, got {self.key.key_size}",
            )
        if isinstance(self.key, ec.EllipticCurvePublicKey):
            # Refuse unsupported curves when the key is loaded, not when it is used.
            object.__setattr__(self, "_ecdsa", ec.ECDSA(_ecdsa_hash(self.key.curve)))
            object.__setattr__(self, "_raw_size", (self.key.curve.key_size + 7) // 8)

    @property
    def algorithm(self) -> str:
        """A short name for reports: `ed25519`, `ecdsa-p256`, `rsa-3072`…"""
        if isinstance(self.key, ed25519.Ed25519PublicKey):
            return "ed25519"
        if isinstance(self.key, ec.EllipticCurvePublicKey):
            return "ecdsa-p" + str(self.key.curve.key_size)
        return f"rsa-{self.key.key_size}"

    def fingerprint(self) -> str:
        """Hex SHA-256 of the DER public key, whatever `keyid` the key was given."""
        return key_id(self.key)

    @property
    def keyids(self) -> frozenset[str]:
        """Every id a signature may name this key by: its own, assay's, in-toto's."""
        return self._keyids

    def verify(self, signature: bytes, data: bytes) -> bool:
        """True when `signature` is valid for `data` under this key."""
        key = self.key
        try:
            if isinstance(key, ed25519.Ed25519PublicKey):
                key.verify(signature, data)
                return True
            if self._ecdsa is not None:
                assert isinstance(key, ec.EllipticCurvePublicKey)
                return _verify_ecdsa(key, self._ecdsa, self._raw_size, signature, data)
            assert isinstance(key, rsa.RSAPublicKey)
            return _verify_rsa(key, self.rsa_scheme, signature, data)
        except InvalidSignature:
            return False

    def to_pem(self) -> bytes:
        return self.key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def _verify_ecdsa(
    key: ec.EllipticCurvePublicKey, algorithm: ec.ECDSA, size: int, signature: bytes, data: bytes
) -> bool:
    if signature[:1] == b"\x30":
        try:
            key.verify(signature, data, algorithm)
            return True
        except (InvalidSignature, ValueError):
            # A raw r||s signature may start with 0x30 by chance; try it as raw below.
            pass
    if len(signature) != 2 * size:
        return False
    r = int.from_bytes(signature[:size], "big")
    s = int.from_bytes(signature[size:], "big")
    try:
        key.verify(encode_dss_signature(r, s), data, algorithm)
    except (InvalidSignature, ValueError):
        return False
    return True


def _verify_rsa(key: rsa.RSAPublicKey, scheme: RsaScheme, signature: bytes, data: bytes) -> bool:
    if scheme in (RsaScheme.PSS, RsaScheme.ANY):
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=padding.PSS.AUTO)
        try:
            key.verify(signature, data, pss, hashes.SHA256())
            return True
        except InvalidSignature:
            if scheme is RsaScheme.PSS:
                return False
    try:
        key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


@dataclass(frozen=True, slots=True)
class PrivateKey:
    """A private key that signs bytes; RSA signs with PSS unless told PKCS#1 v1.5."""

    key: PrivateKeyTypes
    keyid: str = ""
    rsa_scheme: RsaScheme = RsaScheme.PSS

    def __post_init__(self) -> None:
        if not self.keyid:
            keyid = sslib_key_id(self.key.public_key(), self.rsa_scheme)
            object.__setattr__(self, "keyid", keyid)

    def public_key(self) -> PublicKey:
        return PublicKey(self.key.public_key(), keyid=self.keyid)

    def sign(self, data: bytes) -> bytes:
        key = self.key
        if isinstance(key, ed25519.Ed25519PrivateKey):
            return key.sign(data)
        if isinstance(key, ec.EllipticCurvePrivateKey):
            return key.sign(data, ec.ECDSA(_ecdsa_hash(key.curve)))
        if self.rsa_scheme is RsaScheme.PKCS1V15:
            return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=padding.PSS.DIGEST_LENGTH)
        return key.sign(data, pss, hashes.SHA256())

    def to_pem(self, passphrase: bytes | None = None) -> bytes:
        encryption: serialization.KeySerializationEncryption = (
            serialization.BestAvailableEncryption(passphrase)
            if passphrase
            else serialization.NoEncryption()
        )
        return self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
        )


def ecdsa_raw_to_der(signature: bytes) -> bytes:
    """Convert an `r || s` signature to DER (helper for peers that only read DER)."""
    half = len(signature) // 2
    return encode_dss_signature(
        int.from_bytes(signature[:half], "big"), int.from_bytes(signature[half:], "big")
    )


def ecdsa_der_to_raw(signature: bytes, curve_bits: int) -> bytes:
    """Convert a DER ECDSA signature to `r || s` with fixed-width halves."""
    size = (curve_bits + 7) // 8
    r, s = decode_dss_signature(signature)
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def generate_private_key(key_type: KeyType | str) -> PrivateKey:
    """A fresh private key of the named type."""
    kind = KeyType(key_type)
    new: PrivateKeyTypes
    if kind is KeyType.ED25519:
        new = ed25519.Ed25519PrivateKey.generate()
    elif kind is KeyType.ECDSA_P256:
        new = ec.generate_private_key(ec.SECP256R1())
    elif kind is KeyType.ECDSA_P384:
        new = ec.generate_private_key(ec.SECP384R1())
    elif kind is KeyType.ECDSA_P521:
        new = ec.generate_private_key(ec.SECP521R1())
    else:
        new = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    return PrivateKey(new)


def _check_size(where: str, data: bytes) -> None:
    if len(data) > MAX_PEM_BYTES:
        raise InputError(
            where, f"expected a PEM key of at most {MAX_PEM_BYTES} bytes, got {len(data)}"
        )


def load_public_key(data: bytes, *, where: str = "public key", keyid: str = "") -> PublicKey:
    """Parse a PEM SubjectPublicKeyInfo public key (or take the public half of a private key)."""
    _check_size(where, data)
    if data.lstrip().startswith(b"{"):
        return _load_json_public_key(data, where=where, keyid=keyid)
    if b"PRIVATE KEY" in data:
        return load_private_key(data, where=where).public_key()
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as error:
        raise InputError(
            where, f"expected a PEM public key (SPKI), could not parse it: {error}"
        ) from None
    if not isinstance(key, ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey):
        raise InputError(where, f"expected an Ed25519, ECDSA or RSA key, got {type(key).__name__}")
    return PublicKey(key, keyid=keyid)


def _load_json_public_key(data: bytes, *, where: str, keyid: str) -> PublicKey:
    """A securesystemslib/in-toto JSON key: `{"keytype", "scheme", "keyval": {"public"}}`."""
    try:
        parsed = json.loads(data)
        keytype = parsed["keytype"]
        public = parsed["keyval"]["public"]
    except (ValueError, KeyError, TypeError):
        raise InputError(
            where, "expected a PEM key or a JSON key with keytype and keyval.public"
        ) from None
    intoto = _intoto_id_of(parsed)
    if keytype == "ed25519":
        return PublicKey(_ed25519_key(public, where), keyid=keyid, intoto_keyid=intoto)
    if keytype in ("ecdsa", "rsa") or str(keytype).startswith("ecdsa-"):
        if not isinstance(public, str):
            raise InputError(f"{where}: $.keyval.public", "expected a PEM string")
        key = load_public_key(public.encode("ascii", "replace"), where=where, keyid=keyid)
        rsa_scheme = _rsa_scheme(keytype, str(parsed.get("scheme", "")))
        return PublicKey(key.key, keyid=key.keyid, rsa_scheme=rsa_scheme, intoto_keyid=intoto)
    raise InputError(f"{where}: $.keytype", f"expected ed25519, ecdsa or rsa, got {keytype!r}")


def _ed25519_key(public: object, where: str) -> ed25519.Ed25519PublicKey:
    try:
        if isinstance(public, str):
            return ed25519.Ed25519PublicKey.from_public_bytes(bytes.fromhex(public))
    except ValueError:
        pass
    raise InputError(f"{where}: $.keyval.public", "expected 64 hex digits of an Ed25519 key")


def _rsa_scheme(keytype: str, scheme: str) -> RsaScheme:
    """The padding an in-toto RSA key's `scheme` names; any, for other keys."""
    if keytype != "rsa":
        return RsaScheme.ANY
    named = (padding for prefix, padding in _RSA_SCHEMES if scheme.startswith(prefix))
    return next(named, RsaScheme.ANY)


_RSA_SCHEMES: Final = (("rsa-pkcs1v15", RsaScheme.PKCS1V15), ("rsassa-pss", RsaScheme.PSS))
"""securesystemslib's RSA scheme prefixes and the padding each names."""


def _intoto_id_of(parsed: object) -> str:
    # The id in-toto gives this very JSON key: its public fields, canonically encoded.
    if not isinstance(parsed, dict):
        return ""
    fields = {k: parsed[k] for k in ("keytype", "scheme", "keyid_hash_algorithms") if k in parsed}
    keyval = parsed.get("keyval")
    if not isinstance(keyval, dict):
        return ""
    fields["keyval"] = {"public": keyval.get("public")}
    try:
        return intoto_key_id(fields)
    except TypeError:
        return ""


def _pem_private_key(data: bytes, passphrase: bytes | None, where: str) -> object:
    """The PEM private key in `data` (decrypted with `passphrase` when one is given)."""
    try:
        return serialization.load_pem_private_key(data, password=passphrase)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        hint = " (wrong passphrase?)" if passphrase is not None else ""
        raise InputError(where, f"expected a PEM private key (PKCS#8){hint}: {error}") from None


def load_private_key(
    data: bytes, *, passphrase: bytes | None = None, where: str = "private key"
) -> PrivateKey:
    """Parse a PEM PKCS#8 private key, decrypting it with `passphrase` when it is encrypted."""
    _check_size(where, data)
    encrypted = b"ENCRYPTED PRIVATE KEY" in data
    if encrypted and not passphrase:
        raise InputError(where, "the private key is encrypted: expected a passphrase, got none")
    key = _pem_private_key(data, passphrase if encrypted else None, where)
    if not isinstance(
        key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    ):
        raise InputError(where, f"expected an Ed25519, ECDSA or RSA key, got {type(key).__name__}")
    return PrivateKey(key)
