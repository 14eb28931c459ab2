"""The VEX reader's rules: status words, required justifications, strict JSON, limits,
and signed documents that count only once they verify."""

from __future__ import annotations

import json

import pytest

from assay.keys import PrivateKey
from assay.vex import TrustedSigner, VexError, VexStatus, VexTrust, read_vex
from assay.vex.reader import MAX_DEPTH, MAX_VEX_BYTES

from .samples import REAL, openvex, sign, statement_of

LOG4J = {
    "vulnerability": {"name": "CVE-2021-44228", "aliases": ["GHSA-jfh8-c2jp-5v3q"]},
    "products": [{"@id": "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1"}],
    "status": "not_affected",
    "justification": "vulnerable_code_not_in_execute_path",
}


def _cyclonedx(state: str, **analysis: str) -> bytes:
    return json.dumps(
        {
            "bomFormat": "CycloneDX",
            "specVersion": "1.5",
            "components": [
                {"bom-ref": "lib", "name": "lib", "purl": "pkg:pypi/lib@1.0"},
            ],
            "vulnerabilities": [
                {
                    "id": "CVE-2024-1",
                    "analysis": {"state": state, **analysis},
                    "affects": [{"ref": "lib"}],
                }
            ],
        }
    ).encode()


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("resolved", VexStatus.FIXED),
        ("exploitable", VexStatus.AFFECTED),
        ("in_triage", VexStatus.UNDER_INVESTIGATION),
        ("false_positive", VexStatus.NOT_AFFECTED),
        ("not_affected", VexStatus.NOT_AFFECTED),
    ],
)
def test_cyclonedx_states_in_openvex_words(state: str, status: VexStatus) -> None:
    document = read_vex(_cyclonedx(state, detail="checked"), "bom.json")
    (statement,) = document.statements
    assert statement.status is status
    names = {(p.kind, p.value) for p in statement.products}
    assert ("purl", "pkg:pypi/lib@1.0") in names  # the bom-ref's component, inside the BOM


def _csaf(group: str, **extra: object) -> bytes:
    return json.dumps(
        {
            "document": {
                "category": "csaf_vex",
                "csaf_version": "2.0",
                "publisher": {"name": "ACME PSIRT", "category": "vendor", "namespace": "https://a"},
                "title": "t",
                "tracking": {"id": "ACME-1", "current_release_date": "2024-02-01T00:00:00Z"},
            },
            "product_tree": {
                "full_product_names": [
                    {
                        "name": "lib 1.0",
                        "product_id": "P1",
                        "product_identification_helper": {"purl": "pkg:pypi/lib@1.0"},
                    }
                ]
            },
            "vulnerabilities": [{"cve": "CVE-2024-1", "product_status": {group: ["P1"]}, **extra}],
        }
    ).encode()


@pytest.mark.parametrize(
    ("group", "status"),
    [
        ("known_affected", VexStatus.AFFECTED),
        ("fixed", VexStatus.FIXED),
        ("under_investigation", VexStatus.UNDER_INVESTIGATION),
    ],
)
def test_csaf_groups_in_openvex_words(group: str, status: VexStatus) -> None:
    (statement,) = read_vex(_csaf(group), "csaf.json").statements
    assert statement.status is status
    assert statement.document == "ACME-1"
    assert statement.author == "ACME PSIRT"


def test_csaf_not_affected_takes_flag_and_remediation_words() -> None:
    data = _csaf(
        "known_not_affected",
        flags=[{"label": "component_not_present", "product_ids": ["P1"]}],
    )
    (statement,) = read_vex(data, "csaf.json").statements
    assert statement.status is VexStatus.NOT_AFFECTED
    assert statement.justification == "component_not_present"


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (openvex({**LOG4J, "justification": None}), "doc.json: $.statements[0]"),
        (_cyclonedx("not_affected"), "doc.json: $.vulnerabilities[0]"),
        (_cyclonedx("false_positive"), "doc.json: $.vulnerabilities[0]"),
        (
            _csaf("known_not_affected"),
            "doc.json: $.vulnerabilities[0].product_status.known_not_affected[0]",
        ),
    ],
    ids=["openvex", "cyclonedx", "cyclonedx-false-positive", "csaf"],
)
def test_not_affected_without_justification_or_impact_is_refused(data: bytes, where: str) -> None:
    with pytest.raises(VexError) as caught:
        read_vex(data, "doc.json")
    assert caught.value.where == where
    assert "CVE-" in caught.value.reason


def test_impact_statement_alone_is_enough() -> None:
    statement = {**LOG4J, "justification": None, "impact_statement": "never called"}
    (read,) = read_vex(openvex(statement), "doc.json").statements
    assert read.impact == "never called"


@pytest.mark.parametrize(
    ("change", "where", "reason"),
    [
        ({"status": "maybe"}, "$.statements[0].status", "expected one of not_affected"),
        ({"justification": "trust_me"}, "$.statements[0].justification", "expected one of"),
        ({"timestamp": "yesterday"}, "$.statements[0].timestamp", "RFC 3339"),
        ({"vulnerability": {}}, "$.statements[0].vulnerability.name", "expected the vulnerab"),
    ],
)
def test_openvex_field_errors_name_the_path(
    change: dict[str, object], where: str, reason: str
) -> None:
    with pytest.raises(VexError) as caught:
        read_vex(openvex({**LOG4J, **change}), "doc.json")
    assert caught.value.where == f"doc.json: {where}"
    assert reason in caught.value.reason


def test_duplicate_keys_are_refused() -> None:
    data = b'{"@context": "https://openvex.dev/ns/v0.2.0", "statements": [], "statements": []}'
    with pytest.raises(VexError) as caught:
        read_vex(data, "doc.json")
    assert caught.value.where == "doc.json: $.statements"
    assert "duplicate key" in caught.value.reason


def test_nesting_and_size_are_bounded() -> None:
    deep = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    with pytest.raises(VexError, match="nesting"):
        read_vex(deep, "deep.json")
    with pytest.raises(VexError, match="at most"):
        read_vex(b" " * (MAX_VEX_BYTES + 1), "big.json")


def test_yaml_and_other_json_are_refused() -> None:
    with pytest.raises(VexError, match="invalid JSON"):
        read_vex(b"statements: []\n", "vex.yaml")
    with pytest.raises(VexError, match="expected an OpenVEX document"):
        read_vex(b'{"entries": []}', "index.json")


def test_unsigned_in_toto_statement_reads_as_unsigned() -> None:
    document = read_vex(statement_of(openvex(LOG4J)), "vex.intoto.json")
    assert document.signature is None
    assert document.statements[0].vulnerability == "CVE-2021-44228"


def test_signed_envelope_counts_once_it_verifies(vendor_key: PrivateKey) -> None:
    envelope = sign(statement_of(openvex(LOG4J)), vendor_key)
    trust = VexTrust((TrustedSigner("vendor", keys=(vendor_key.public_key(),)),))
    document = read_vex(envelope, "vex.dsse.json", trust)
    assert document.signature is not None
    assert document.signature.signer == "vendor"
    assert document.statements[0].aliases == ("GHSA-jfh8-c2jp-5v3q",)


def test_signed_envelope_without_trusted_keys_is_refused(vendor_key: PrivateKey) -> None:
    envelope = sign(openvex(LOG4J), vendor_key)
    with pytest.raises(VexError, match="no trusted key was given"):
        read_vex(envelope, "vex.dsse.json")


def test_signed_envelope_of_another_key_is_refused(
    vendor_key: PrivateKey, other_key: PrivateKey
) -> None:
    envelope = sign(openvex(LOG4J), other_key)
    trust = VexTrust((TrustedSigner("vendor", keys=(vendor_key.public_key(),)),))
    with pytest.raises(VexError) as caught:
        read_vex(envelope, "vex.dsse.json", trust)
    assert caught.value.where == "vex.dsse.json"
    assert "do not verify with any trusted key (vendor)" in caught.value.reason


def test_tampered_payload_does_not_verify(vendor_key: PrivateKey) -> None:
    envelope = json.loads(sign(openvex(LOG4J), vendor_key))
    import base64

    payload = base64.b64decode(envelope["payload"]).replace(
        b"not_affected", b"fixed\x00\x00\x00\x00\x00\x00\x00"
    )
    envelope["payload"] = base64.b64encode(payload).decode()
    trust = VexTrust((TrustedSigner("vendor", keys=(vendor_key.public_key(),)),))
    with pytest.raises(VexError, match="do not verify"):
        read_vex(json.dumps(envelope).encode(), "vex.dsse.json", trust)


def test_sigstore_bundle_without_identity_is_refused() -> None:
    bundle = {"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json", "dsseEnvelope": {}}
    with pytest.raises(VexError, match="no trusted identity was given"):
        read_vex(json.dumps(bundle).encode(), "vex.sigstore.json")


CDX_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<bom xmlns="http://cyclonedx.org/schema/bom/1.5" serialNumber="urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79" version="1">
  <metadata>
    <timestamp>2022-03-03T00:00:00Z</timestamp>
    <component type="application" bom-ref="product-ABC"><name>ABC</name><version>4.2</version></component>
  </metadata>
  <components>
    <component type="library" bom-ref="log4j">
      <name>log4j-core</name><version>2.14.1</version>
      <purl>pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1</purl>
    </component>
  </components>
  <vulnerabilities>
    <vulnerability bom-ref="v1">
      <id>CVE-2021-44228</id>
      <references><reference><id>GHSA-jfh8-c2jp-5v3q</id></reference></references>
      <analysis>
        <state>not_affected</state>
        <justification>code_not_reachable</justification>
        <responses><response>will_not_fix</response></responses>
        <detail>JNDI lookups are disabled.</detail>
      </analysis>
      <affects><target><ref>log4j</ref></target></affects>
    </vulnerability>
  </vulnerabilities>
</bom>
"""


def test_cyclonedx_xml_reads_as_its_json() -> None:
    document = read_vex(CDX_XML, "vex.cdx.xml")
    assert (document.format, document.spec_version) == ("cyclonedx", "1.5")
    assert document.id == "urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79"
    (statement,) = document.statements
    assert statement.status is VexStatus.NOT_AFFECTED
    assert statement.aliases == ("GHSA-jfh8-c2jp-5v3q",)
    assert statement.justification == "code_not_reachable"
    assert statement.impact == "JNDI lookups are disabled."
    names = {(p.kind, p.value) for p in statement.products}
    assert ("purl", "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1") in names


def test_cyclonedx_xml_with_entities_is_refused() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE bom [<!ENTITY a "aaaa">]>'
        b'<bom xmlns="http://cyclonedx.org/schema/bom/1.5"><vulnerabilities/>&a;</bom>'
    )
    with pytest.raises(VexError, match="expected CycloneDX XML"):
        read_vex(bomb, "bomb.xml")


SIGSTORE_JS = REAL.parent.parent / "sigstore/github-cli/sigstore-js-2.1.0-bundle.json"
SIGSTORE_SAN = (
    "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main"
)
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"


def _identity_trust(san: str, issuer: str) -> VexTrust:
    from assay._cli.scan_vex import identity_matcher
    from assay.sigstore import BundleVerifier, select_roots

    signer = TrustedSigner("vendor", identity=identity_matcher(san, issuer), describe=san)
    return VexTrust((signer,), BundleVerifier(select_roots()))


def test_sigstore_bundle_verifies_then_its_payload_must_be_vex() -> None:
    # a real bundle (npm provenance, not VEX): the signature and identity verify, and
    # only then is the payload read, and refused for what it is
    trust = _identity_trust(SIGSTORE_SAN, GITHUB_ISSUER)
    with pytest.raises(VexError) as caught:
        read_vex(SIGSTORE_JS.read_bytes(), "bundle.json", trust)
    assert "expected an OpenVEX document" in caught.value.reason


def test_sigstore_bundle_of_another_identity_is_refused() -> None:
    trust = _identity_trust(
        "https://github.com/acme/vex/.github/workflows/vex.yml@refs/heads/main", GITHUB_ISSUER
    )
    with pytest.raises(VexError) as caught:
        read_vex(SIGSTORE_JS.read_bytes(), "bundle.json", trust)
    assert "is none of the trusted identities" in caught.value.reason
    assert SIGSTORE_SAN in caught.value.reason


def test_json_lines_with_one_signed_vex(vendor_key: PrivateKey) -> None:
    envelope = sign(statement_of(openvex(LOG4J)), vendor_key)
    trust = VexTrust((TrustedSigner("vendor", keys=(vendor_key.public_key(),)),))
    lines = envelope + b"\n" + b'{"note": "not an attestation"}\n'
    document = read_vex(lines, "vex.intoto.jsonl", trust)
    assert document.signature is not None
    with pytest.raises(VexError, match="expected one VEX attestation, found 2"):
        read_vex(envelope + b"\n" + envelope + b"\n", "two.intoto.jsonl", trust)


def test_statement_field_in_another_case_is_refused() -> None:
    # the reader of attestation files refuses it: two readers could see two statements
    data = (
        b'{"_type": "https://in-toto.io/Statement/v1", "subject": [], "predicate": {},'
        b' "predicateType": "https://openvex.dev/ns/v0.2.0", "PredicateType": "x"}'
    )
    with pytest.raises(VexError) as caught:
        read_vex(data, "x.json")
    assert caught.value.where == "x.json: $.PredicateType"
    assert "differs in case" in caught.value.reason
