"""Every input format read into the same components, and bad input named precisely."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from tests.audit.conftest import cyclonedx

from assay.audit import read_input
from assay.audit.inputs import UNVERIFIED_NOTE
from assay.audit.inputs.purls import purl_inventory
from assay.errors import InputError

DJANGO_CPE = "cpe:2.3:a:djangoproject:django:4.2.0:*:*:*:*:*:*:*"
COMPONENTS: list[dict[str, Any]] = [
    {
        "type": "library",
        "bom-ref": "pkg:pypi/django@4.2.0",
        "name": "django",
        "version": "4.2.0",
        "purl": "pkg:pypi/django@4.2.0",
        "cpe": DJANGO_CPE,
        "externalReferences": [{"type": "vcs", "url": "https://github.com/django/django"}],
        "components": [{"type": "library", "name": "inner", "version": "1.0"}],
    },
    {
        "type": "library",
        "group": "org.apache.logging.log4j",
        "name": "log4j-core",
        "version": "2.14.1",
    },
]


def test_cyclonedx_json_nested_components_and_refs() -> None:
    inventory = read_input(cyclonedx(COMPONENTS), "bom.json")
    assert inventory.format == "cyclonedx-json"
    django, inner, log4j = inventory.components
    assert django.ref == "pkg:pypi/django@4.2.0"
    assert django.cpes == (DJANGO_CPE,)
    assert django.repository == "https://github.com/django/django"
    assert inner.ref == "inner@1.0"
    assert log4j.name == "org.apache.logging.log4j/log4j-core"
    assert log4j.ref == "org.apache.logging.log4j/log4j-core@2.14.1"
    assert inventory.document is not None


@pytest.mark.parametrize("spec", ["1.4", "1.5", "1.6"])
def test_cyclonedx_xml(spec: str) -> None:
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<bom xmlns="http://cyclonedx.org/schema/bom/{spec}" version="1">
  <components>
    <component type="library" bom-ref="django-ref">
      <name>django</name><version>4.2.0</version>
      <cpe>{DJANGO_CPE}</cpe><purl>pkg:pypi/django@4.2.0</purl>
      <externalReferences><reference type="vcs"><url>https://github.com/django/django</url></reference></externalReferences>
    </component>
  </components>
</bom>""".encode()
    (component,) = read_input(xml, "bom.xml").components
    assert (component.ref, component.version, component.cpes) == (
        "django-ref",
        "4.2.0",
        (DJANGO_CPE,),
    )
    assert component.purl == "pkg:pypi/django@4.2.0"
    assert component.repository == "https://github.com/django/django"


SPDX_JSON: dict[str, Any] = {
    "spdxVersion": "SPDX-2.3",
    "dataLicense": "CC0-1.0",
    "SPDXID": "SPDXRef-DOCUMENT",
    "name": "example",
    "documentNamespace": "https://example.org/spdx/example-1",
    "creationInfo": {"created": "2024-01-01T00:00:00Z", "creators": ["Tool: example"]},
    "packages": [
        {
            "SPDXID": "SPDXRef-django",
            "name": "django",
            "versionInfo": "4.2.0",
            "downloadLocation": "git+https://github.com/django/django@4.2",
            "externalRefs": [
                {
                    "referenceCategory": "PACKAGE-MANAGER",
                    "referenceType": "purl",
                    "referenceLocator": "pkg:pypi/django@4.2.0",
                },
                {
                    "referenceCategory": "SECURITY",
                    "referenceType": "cpe23Type",
                    "referenceLocator": DJANGO_CPE,
                },
            ],
        }
    ],
}

SPDX_TAG_VALUE = f"""SPDXVersion: SPDX-2.3
DataLicense: CC0-1.0
SPDXID: SPDXRef-DOCUMENT
DocumentName: example
DocumentNamespace: https://example.org/spdx/example-1
Creator: Tool: example
Created: 2024-01-01T00:00:00Z

PackageName: django
SPDXID: SPDXRef-django
PackageVersion: 4.2.0
PackageDownloadLocation: git+https://github.com/django/django@4.2
ExternalRef: PACKAGE-MANAGER purl pkg:pypi/django@4.2.0
ExternalRef: SECURITY cpe23Type {DJANGO_CPE}
""".encode()

SPDX3: dict[str, Any] = {
    "@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld",
    "@graph": [
        {"type": "CreationInfo", "@id": "_:creationinfo", "specVersion": "3.0.1"},
        {
            "type": "software_Package",
            "spdxId": "urn:example:django",
            "name": "django",
            "software_packageVersion": "4.2.0",
            "software_packageUrl": "pkg:pypi/django@4.2.0",
            "software_downloadLocation": "git+https://github.com/django/django",
            "externalIdentifier": [
                {
                    "type": "ExternalIdentifier",
                    "externalIdentifierType": "cpe23",
                    "identifier": DJANGO_CPE,
                }
            ],
        },
    ],
}


@pytest.mark.parametrize(
    ("data", "fmt", "ref"),
    [
        (orjson.dumps(SPDX_JSON), "spdx-json", "SPDXRef-django"),
        (SPDX_TAG_VALUE, "spdx-tag-value", "SPDXRef-django"),
        (orjson.dumps(SPDX3), "spdx3-json", "urn:example:django"),
    ],
    ids=["spdx-2.3-json", "spdx-2.3-tag-value", "spdx-3.0-json-ld"],
)
def test_spdx(data: bytes, fmt: str, ref: str) -> None:
    inventory = read_input(data, "sbom.spdx")
    assert inventory.format == fmt
    (component,) = inventory.components
    assert (component.ref, component.name, component.version) == (ref, "django", "4.2.0")
    assert component.purl == "pkg:pypi/django@4.2.0"
    assert component.cpes == (DJANGO_CPE,)
    assert component.repository == "git+https://github.com/django/django"


def _envelope(statement: dict[str, Any]) -> bytes:
    return orjson.dumps(
        {
            "payloadType": "application/vnd.in-toto+json",
            "payload": base64.b64encode(orjson.dumps(statement)).decode(),
            "signatures": [{"keyid": "k", "sig": base64.b64encode(b"not checked").decode()}],
        }
    )


SUBJECT = [{"name": "app.tar.gz", "digest": {"sha256": "a" * 64}}]


def test_a_dsse_envelope_of_a_cyclonedx_statement_says_it_was_not_verified() -> None:
    bom = orjson.loads(cyclonedx(COMPONENTS))
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": SUBJECT,
        "predicateType": "https://cyclonedx.org/bom",
        "predicate": bom,
    }
    inventory = read_input(_envelope(statement), "sbom.intoto.json")
    assert inventory.format == "cyclonedx-json"
    assert inventory.verified is False
    assert inventory.notes == (UNVERIFIED_NOTE,)
    assert next(c.name for c in inventory.components) == "django"


def test_slsa_provenance_dependencies() -> None:
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": SUBJECT,
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": "https://example.org/build",
                "externalParameters": {},
                "resolvedDependencies": [
                    {
                        "uri": "git+https://github.com/example/app@refs/heads/main",
                        "digest": {"gitCommit": "b" * 40},
                    },
                    {"uri": "pkg:pypi/django@4.2.0", "digest": {"sha256": "c" * 64}},
                ],
            },
            "runDetails": {"builder": {"id": "https://example.org/builder"}},
        },
    }
    inventory = read_input(_envelope(statement), "provenance.json")
    assert inventory.format == "slsa-provenance"
    source, django = inventory.components
    assert source.repository == "git+https://github.com/example/app"
    assert source.version is None
    assert (django.purl, django.version) == ("pkg:pypi/django@4.2.0", "4.2.0")


def test_purls_from_the_command_line() -> None:
    inventory = purl_inventory(["pkg:npm/%40angular/core@12.0.0", "pkg:pypi/django@4.2.0"])
    angular, django = inventory.components
    assert (angular.name, angular.version) == ("@angular/core", "12.0.0")
    assert django.ref == "django@4.2.0"
    with pytest.raises(InputError, match="--purl nonsense"):
        purl_inventory(["nonsense"])


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (cyclonedx([{"type": "library", "version": "1"}]), "bom.json: $.components[0].name"),
        (cyclonedx([{"name": "a", "version": 3}]), "bom.json: $.components[0].version"),
        (cyclonedx([], spec="2.0"), "bom.json: $.specVersion"),
        (
            b'{"bomFormat": "CycloneDX", "specVersion": "1.5", "components": {}}',
            "bom.json: $.components",
        ),
        (b"{not json", "bom.json"),
        (b'{"hello": "world"}', "bom.json"),
        (b"<html/>", "bom.json"),
        (b"\xff\xfe\x00garbage", "bom.json"),
    ],
)
def test_bad_input_names_the_place(data: bytes, where: str) -> None:
    with pytest.raises(InputError) as error:
        read_input(data, "bom.json")
    assert error.value.where.startswith(where)


def test_an_invalid_spdx_document_is_an_input_error() -> None:
    broken = {**SPDX_JSON}
    del broken["creationInfo"]
    with pytest.raises(InputError, match=r"sbom\.json: expected a valid SPDX document"):
        read_input(orjson.dumps(broken), "sbom.json")


def test_deeply_nested_components_are_refused() -> None:
    component: dict[str, Any] = {"name": "leaf"}
    for _ in range(40):
        component = {"name": "n", "components": [component]}
    with pytest.raises(InputError, match="nested deeper"):
        read_input(cyclonedx([component]), "bom.json")


def test_oversized_input_is_refused_before_parsing() -> None:
    from assay.audit.inputs import MAX_INPUT_BYTES

    with pytest.raises(InputError, match="expected at most"):
        read_input(b" " * (MAX_INPUT_BYTES + 1), "bom.json")


@pytest.mark.parametrize(
    ("filename", "data", "fmt", "purl"),
    [
        (
            "requirements.txt",
            b"django==4.2.0\nrequests==2.31.0\n",
            "requirements",
            "pkg:pypi/django@4.2.0",
        ),
        (
            "freeze.out",
            b"Django==4.2.0\nrequests==2.31.0\n",
            "requirements",
            "pkg:pypi/django@4.2.0",
        ),
        (
            "package-lock.json",
            orjson.dumps(
                {
                    "name": "app",
                    "lockfileVersion": 3,
                    "packages": {
                        "": {"name": "app"},
                        "node_modules/lodash": {
                            "version": "4.17.20",
                            "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.20.tgz",
                        },
                    },
                }
            ),
            "package-lock",
            "pkg:npm/lodash@4.17.20",
        ),
    ],
)
def test_lock_files_through_assay_lockfiles(
    filename: str, data: bytes, fmt: str, purl: str
) -> None:
    inventory = read_input(data, filename)
    assert inventory.format == fmt
    assert inventory.components[0].purl == purl
    assert inventory.components[0].ref.endswith(purl.rsplit("@", 1)[1])
