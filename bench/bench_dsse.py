"""DSSE verification per envelope: assay vs securesystemslib vs bare `cryptography`.

Each round parses one serialized envelope (JSON text, base64) and verifies its one
signature over PAE, for Ed25519 and ECDSA P-256:

- assay:            `dsse.verify(dsse.Envelope.from_json(data), [key])`
- securesystemslib: `Envelope.from_dict(json.loads(data)).verify([key], 1)`
- cryptography:     `json.loads`, two `b64decode`s, PAE, `key.verify` (the floor)

Ratios are per-envelope time over the bare `cryptography` time (target: assay <= 1.2x).

    python -m bench dsse            (or: python -m bench.bench_dsse --rounds 5000)
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from securesystemslib.dsse import Envelope as SslibEnvelope
from securesystemslib.signer import SSlibKey

from assay import dsse
from assay.keys import PrivateKey, generate_private_key

PAYLOAD = json.dumps(
    {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "widget", "digest": {"sha256": "ab" * 32}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
                "externalParameters": {
                    "workflow": {
                        "ref": "refs/tags/v1.0.0",
                        "repository": "https://github.com/acme/widget",
                        "path": ".github/workflows/release.yml",
                    }
                },
            },
            "runDetails": {"builder": {"id": "https://github.com/actions/runner/github-hosted"}},
        },
    }
).encode()


def _bare(data: bytes, key: object) -> bytes:
    envelope = json.loads(data)
    payload = base64.b64decode(envelope["payload"])
    signature = base64.b64decode(envelope["signatures"][0]["sig"])
    payload_type = envelope["payloadType"].encode()
    message = b"DSSEv1 %d %b %d %b" % (len(payload_type), payload_type, len(payload), payload)
    if isinstance(key, ed25519.Ed25519PublicKey):
        key.verify(signature, message)
    elif isinstance(key, ec.EllipticCurvePublicKey):
        key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    return payload


def _interleaved(
    functions: dict[str, Callable[[], object]], rounds: int, repeats: int
) -> dict[str, float]:
    """Best mean time per call (microseconds), contenders alternating in short batches.

    The machine is shared: alternating batches exposes every contender to the same load,
    and the minimum over many batches estimates the unloaded cost.
    """
    batch = max(rounds // 20, 1)
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats * 20):
        for label, function in functions.items():
            started = time.perf_counter()
            for _ in range(batch):
                function()
            best[label] = min(best[label], (time.perf_counter() - started) / batch * 1e6)
    return best


def _case(name: str, private: PrivateKey, rounds: int, repeats: int) -> dict[str, float]:
    envelope = dsse.sign(PAYLOAD, dsse.INTOTO_PAYLOAD_TYPE, [private])
    data = envelope.to_json()
    public = private.public_key()
    crypto_key = public.key
    sslib_key = SSlibKey.from_crypto(crypto_key, keyid=private.keyid)
    keys = [public]

    def assay() -> object:
        return dsse.verify(dsse.Envelope.from_json(data), keys)

    def sslib() -> object:
        return SslibEnvelope.from_dict(json.loads(data)).verify([sslib_key], 1)

    def bare() -> object:
        return _bare(data, crypto_key)

    # Every contender must actually verify before it is timed.
    assert assay()
    assert sslib()
    assert bare() == PAYLOAD
    contenders = {"cryptography": bare, "assay": assay, "securesystemslib": sslib}
    _interleaved(contenders, rounds // 10, 1)  # warm-up
    results = _interleaved(contenders, rounds, repeats)
    floor = results["cryptography"]
    print(f"{name}: {len(data)}-byte envelope, best batch of {repeats * 20} x {rounds // 20} calls")
    for label, micros in results.items():
        print(f"  {label:<17} {micros:8.1f} us/envelope   {micros / floor:5.2f}x cryptography")
    return results


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench dsse", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    ratios = {}
    for name, kind in (("Ed25519", "ed25519"), ("ECDSA P-256", "ecdsa-p256")):
        results = _case(name, generate_private_key(kind), args.rounds, args.repeats)
        ratios[name] = results["assay"] / results["cryptography"]
    worst = max(ratios.values())
    print(f"assay / cryptography, worst case: {worst:.2f}x (target <= 1.20x)")


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
