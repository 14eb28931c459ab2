"""The VEX readers over every real document in tests/assets/vex/real (copied from the
shared data): each reads with the statuses it states, or is refused with its reason."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from assay.vex import VexError, VexStatus, read_vex

from .samples import REAL

# (path under real/, "format version" or the refusal's JSON path and reason, statuses)
EXPECTED = [
    (
        "csaf-advisories/anchore-vunnel/tests/unit/providers/rhel/test-fixtures/csaf/advisories/2024/rhsa-2024_6163.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/anchore-vunnel/tests/unit/providers/rhel/test-fixtures/csaf/advisories/2024/rhsa-2024_9371.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/anchore-vunnel/tests/unit/providers/rhel/test-fixtures/csaf/advisories/2025/rhsa-2025_23414.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/anchore-vunnel/tests/unit/providers/rhel/test-fixtures/csaf/hydra/cve-2021-25220.json",
        "$ expected an OpenVEX document (@context https://openvex.dev/ns/...), a CycloneDX BOM (bomFormat) or a CSAF document (document.csaf_version), found none of them",
        None,
    ),
    (
        "csaf-advisories/anchore-vunnel/tests/unit/providers/rhel/test-fixtures/csaf/hydra/cve-2024-8088.json",
        "$ expected an OpenVEX document (@context https://openvex.dev/ns/...), a CycloneDX BOM (bomFormat) or a CSAF document (document.csaf_version), found none of them",
        None,
    ),
    (
        "csaf-advisories/anchore-vunnel/tests/unit/providers/rhel/test-fixtures/csaf/input/cve/min_pages/1.json",
        "$ expected a JSON object, found array",
        None,
    ),
    (
        "csaf-advisories/anchore-vunnel/tests/unit/providers/rhel/test-fixtures/csaf/server/2024/rhsa-2024_0010.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/oasis-tcs-csaf/csaf_2.0/examples/csaf/bsi-2022-0001.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/oasis-tcs-csaf/csaf_2.0/examples/csaf/rhsa-2019_1862.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_informational_advisory'",
        None,
    ),
    (
        "csaf-advisories/oasis-tcs-csaf/csaf_2.0/examples/csaf/rhsa-2021_5186.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/oasis-tcs-csaf/csaf_2.0/examples/csaf/rhsa-2021_5217.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/oasis-tcs-csaf/csaf_2.0/examples/csaf/rhsa-2022_0011.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/ossf-osv-schema/tools/redhat/testdata/CSAF/rhsa-2003_315.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/ossf-osv-schema/tools/redhat/testdata/CSAF/rhsa-2024_4546.json",
        "$.document.category expected 'csaf_vex' (the VEX profile), found 'csaf_security_advisory'",
        None,
    ),
    (
        "csaf-advisories/ossf-osv-schema/tools/redhat/testdata/OSV/RHSA-2024_4546.json",
        "$ expected an OpenVEX document (@context https://openvex.dev/ns/...), a CycloneDX BOM (bomFormat) or a CSAF document (document.csaf_version), found none of them",
        None,
    ),
    (
        "csaf-advisories/ossf-osv-schema/tools/redhat/testdata/OSV/RHSA-2024_6220.json",
        "$ expected an OpenVEX document (@context https://openvex.dev/ns/...), a CycloneDX BOM (bomFormat) or a CSAF document (document.csaf_version), found none of them",
        None,
    ),
    (
        "vex/csaf/anchore-grype/grype/db/processors/testdata/csaf-vex.json",
        "$.vulnerabilities[0].product_status.known_not_affected[0] statement for CVE-2026-12345 on hummingbird-1:otherpkg is known_not_affected without a flag (justification) or an impact threat (impact statement)",
        None,
    ),
    (
        "vex/csaf/aquasecurity-trivy/pkg/vex/testdata/csaf-relationships.json",
        "csaf 2.0",
        {"not_affected": 1},
    ),
    (
        "vex/csaf/aquasecurity-trivy/pkg/vex/testdata/csaf.json",
        "$.vulnerabilities[0].product_status.known_not_affected[0] statement for CVE-2024-0001 on go-transitive-v4.0.0 is known_not_affected without a flag (justification) or an impact threat (impact statement)",
        None,
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-01-a-001.json",
        "csaf 2.0",
        {"affected": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-01-f-001.json",
        "csaf 2.0",
        {"fixed": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-01-na-001.json",
        "csaf 2.0",
        {"not_affected": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-01-ui-001.json",
        "csaf 2.0",
        {"under_investigation": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-02-na-001.json",
        "csaf 2.0",
        {"not_affected": 19},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-03-ms-001.json",
        "csaf 2.0",
        {"affected": 5, "fixed": 3, "not_affected": 6, "under_investigation": 5},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-04-001.json",
        "csaf 2.0",
        {"affected": 3},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-05-001.json",
        "csaf 2.0",
        {"under_investigation": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-06-001.json",
        "csaf 2.0",
        {"affected": 3, "not_affected": 4},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-07-001.json",
        "csaf 2.0",
        {"affected": 4, "fixed": 1, "not_affected": 5},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-08-001.json",
        "csaf 2.0",
        {"affected": 8, "fixed": 3, "not_affected": 10},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-09-001.json",
        "csaf 2.0",
        {"affected": 2, "not_affected": 2},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/sec-vex-2022-0001.json",
        "csaf 2.0",
        {"not_affected": 3},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-01-a-001.json",
        "csaf 2.1",
        {"affected": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-01-f-001.json",
        "csaf 2.1",
        {"fixed": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-01-na-001.json",
        "csaf 2.1",
        {"not_affected": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-01-ui-001.json",
        "csaf 2.1",
        {"under_investigation": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-02-na-001.json",
        "csaf 2.1",
        {"not_affected": 19},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-03-ms-001.json",
        "csaf 2.1",
        {"affected": 5, "fixed": 3, "not_affected": 6, "under_investigation": 5},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-04-001.json",
        "csaf 2.1",
        {"affected": 3},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-05-001.json",
        "csaf 2.1",
        {"under_investigation": 1},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-06-001.json",
        "csaf 2.1",
        {"affected": 3, "not_affected": 4},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-07-001.json",
        "csaf 2.1",
        {"affected": 4, "fixed": 1, "not_affected": 5},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-08-001.json",
        "csaf 2.1",
        {"affected": 8, "fixed": 3, "not_affected": 10},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/2022-evd-uc-09-001.json",
        "csaf 2.1",
        {"affected": 2, "not_affected": 2},
    ),
    (
        "vex/csaf/oasis-tcs-csaf/csaf_2.1/examples/csaf/csaf_vex/sec-vex-2022-0001.json",
        "csaf 2.1",
        {"not_affected": 3},
    ),
    (
        "vex/csaf/openvex-go-vex/pkg/csaf/testdata/csaf.json",
        "$.vulnerabilities[0].product_status.known_affected[0] product 'ABC:CSAFPID-0002' is not in the product tree",
        None,
    ),
    ("vex/csaf/openvex-go-vex/pkg/csaf/testdata/rhsa-2020_1358.json", "csaf 2.0", {"fixed": 1474}),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-1/vex-affected.json",
        "cyclonedx 1.4",
        {"affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-1/vex-fixed.json",
        "cyclonedx 1.4",
        {"fixed": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-1/vex-not_affected.json",
        "cyclonedx 1.4",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-1/vex-under_investigation.json",
        "cyclonedx 1.4",
        {"under_investigation": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-2/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 19},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-3/vex.json",
        "cyclonedx 1.4",
        {"affected": 5, "fixed": 3, "not_affected": 6, "under_investigation": 5},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-4/vex.json",
        "cyclonedx 1.4",
        {"affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-5/vex.json",
        "cyclonedx 1.4",
        {"under_investigation": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-6/vex.json",
        "cyclonedx 1.4",
        {"affected": 1, "not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-7/bom-1.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-7/bom-2.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-7/vex.json",
        "cyclonedx 1.4",
        {"affected": 1, "fixed": 1, "not_affected": 2},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-8/bom-1.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-8/bom-2.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-8/vex.json",
        "cyclonedx 1.4",
        {"affected": 2, "fixed": 2, "not_affected": 4},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-1/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-10/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-11/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 19},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-12/vex.json",
        "cyclonedx 1.4",
        {"affected": 1, "not_affected": 2},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-13/bom-1.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-13/bom-2.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-13/bom-3.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-13/vex.json",
        "cyclonedx 1.4",
        {"affected": 1, "not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-2/vex.json",
        "cyclonedx 1.4",
        {"affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-3/vex.json",
        "cyclonedx 1.4",
        {"under_investigation": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-4/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-5/vex.json",
        "cyclonedx 1.4",
        {"affected": 1, "not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-6/bom-1.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-6/bom-2.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-6/bom-3.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-6/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-7/vex.json",
        "$.vulnerabilities[0].affects statement for CVE-2020-25649 names no product",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-8/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-9/bom-1.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-9/bom-2.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-9/bom-3.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/Use-Cases/Case-9/vex.json",
        "cyclonedx 1.4",
        {"not_affected": 19},
    ),
    (
        "vex/cyclonedx/CycloneDX-bom-examples/VEX/bom.json",
        "$.vulnerabilities expected vulnerabilities with an analysis (a VEX), found none",
        None,
    ),
    ("vex/cyclonedx/CycloneDX-bom-examples/VEX/vex.json", "cyclonedx 1.4", {"not_affected": 1}),
    (
        "vex/cyclonedx/CycloneDX-specification/tools/src/test/resources/1.4/valid-vulnerability-1.4.json",
        "cyclonedx 1.4",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-specification/tools/src/test/resources/1.5/valid-vulnerability-1.5.json",
        "cyclonedx 1.5",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-specification/tools/src/test/resources/1.6/valid-vulnerability-1.6.json",
        "cyclonedx 1.6",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/CycloneDX-specification/tools/src/test/resources/1.7/valid-vulnerability-1.7.json",
        "cyclonedx 1.7",
        {"not_affected": 1},
    ),
    (
        "vex/cyclonedx/aquasecurity-trivy/pkg/vex/testdata/cyclonedx.json",
        "$.vulnerabilities[1] statement for CVE-2022-27943 is not_affected (not_affected) without a justification or a detail (an impact statement is required)",
        None,
    ),
    (
        "vex/cyclonedx/dependency-track/apiserver/src/test/resources/unit/vex-issue2549.json",
        "$.vulnerabilities[0] statement for CVE-2020-25649 is not_affected (not_affected) without a justification or a detail (an impact statement is required)",
        None,
    ),
    (
        "vex/openvex/anchore-grype/grype/vex/testdata/vex-docs/csaf-demo1.json",
        "csaf 2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-grype/grype/vex/testdata/vex-docs/csaf-demo2.json",
        "csaf 2.0",
        {"not_affected": 1},
    ),
    (
        "vex/openvex/anchore-grype/grype/vex/testdata/vex-docs/openvex-debian.json",
        "openvex 0.2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-grype/grype/vex/testdata/vex-docs/openvex-demo1.json",
        "openvex 0.2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-grype/grype/vex/testdata/vex-docs/openvex-demo2.json",
        "openvex 0.2.0",
        {"fixed": 3, "not_affected": 2},
    ),
    (
        "vex/openvex/anchore-grype/grype/vex/testdata/vex-docs/openvex-image-no-subcomponents.json",
        "openvex 0.2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-grype/grype/vex/testdata/vex-docs/openvex-package-product.json",
        "openvex 0.2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-grype/test/integration/testdata/vex/csaf/affected.csaf.json",
        "csaf 2.0",
        {"affected": 1},
    ),
    (
        "vex/openvex/anchore-grype/test/integration/testdata/vex/csaf/under_investigation.csaf.json",
        "csaf 2.0",
        {"under_investigation": 1},
    ),
    (
        "vex/openvex/anchore-grype/test/integration/testdata/vex/openvex/affected.openvex.json",
        "openvex 0.2.0",
        {"affected": 1},
    ),
    (
        "vex/openvex/anchore-grype/test/integration/testdata/vex/openvex/under_investigation.openvex.json",
        "openvex 0.2.0",
        {"under_investigation": 1},
    ),
    (
        "vex/openvex/anchore-vunnel/tests/unit/providers/chainguard_libraries/test-fixtures/input/openvex/all.json",
        "$ expected an OpenVEX document (@context https://openvex.dev/ns/...), a CycloneDX BOM (bomFormat) or a CSAF document (document.csaf_version), found none of them",
        None,
    ),
    (
        "vex/openvex/anchore-vunnel/tests/unit/providers/chainguard_libraries/test-fixtures/input/openvex/maven/spring-security-web.openvex.json",
        "openvex 0.2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-vunnel/tests/unit/providers/chainguard_libraries/test-fixtures/input/openvex/pypi/joblib.openvex.json",
        "openvex 0.2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-vunnel/tests/unit/providers/chainguard_libraries/test-fixtures/input/openvex/pypi/urllib3.openvex.json",
        "openvex 0.2.0",
        {"fixed": 1},
    ),
    (
        "vex/openvex/anchore-vunnel/tests/unit/providers/ubuntu/test-fixtures/vex/cve/2016/CVE-2016-20013.json",
        "openvex 0.2.0",
        {"affected": 1, "not_affected": 1},
    ),
    (
        "vex/openvex/anchore-vunnel/tests/unit/providers/ubuntu/test-fixtures/vex/cve/2023/CVE-2023-38545.json",
        "openvex 0.2.0",
        {"affected": 1, "fixed": 1, "not_affected": 1},
    ),
    (
        "vex/openvex/aquasecurity-trivy/pkg/vex/testdata/openvex-multiple.json",
        "openvex 0.0.1",
        {"affected": 1, "not_affected": 1},
    ),
    (
        "vex/openvex/aquasecurity-trivy/pkg/vex/testdata/openvex-nested.json",
        "openvex 0.2.0",
        {"not_affected": 1},
    ),
    (
        "vex/openvex/aquasecurity-trivy/pkg/vex/testdata/openvex-oci-mismatch.json",
        "openvex 0.2.0",
        {"not_affected": 1},
    ),
    (
        "vex/openvex/aquasecurity-trivy/pkg/vex/testdata/openvex-oci.json",
        "openvex 0.2.0",
        {"not_affected": 1},
    ),
    (
        "vex/openvex/aquasecurity-trivy/pkg/vex/testdata/openvex.json",
        "openvex 0.2.0",
        {"not_affected": 1},
    ),
    (
        "vex/openvex/aquasecurity-trivy/pkg/vex/testdata/single-repo/vex/repositories/default/0.1/bash-vex.json",
        "openvex 0.2.0",
        {"not_affected": 1},
    ),
    ("vex/openvex/openvex-go-vex/pkg/csaf/testdata/openvex.json", "openvex 0.0.1", {"fixed": 1}),
    ("vex/openvex/openvex-go-vex/pkg/vex/testdata/csaf.json", "csaf 2.0", {"not_affected": 1}),
    (
        "vex/openvex/openvex-go-vex/pkg/vex/testdata/v0.0.1-noversion.json",
        "openvex 0.0.1",
        {"fixed": 1},
    ),
    ("vex/openvex/openvex-go-vex/pkg/vex/testdata/v0.0.1.json", "openvex 0.0.1", {"fixed": 1}),
    (
        "vex/openvex/openvex-go-vex/pkg/vex/testdata/v0.2.0.json",
        "openvex 0.2.0",
        {"fixed": 3, "not_affected": 2},
    ),
    (
        "vex/openvex/openvex-go-vex/pkg/vex/testdata/v001-1.vex.json",
        "openvex 0.0.1",
        {"under_investigation": 1},
    ),
    ("vex/openvex/openvex-go-vex/pkg/vex/testdata/v001-2.vex.json", "openvex 0.0.1", {"fixed": 1}),
    (
        "vex/openvex/openvex-go-vex/pkg/vex/testdata/v020-1.vex.json",
        "openvex 0.2.0",
        {"under_investigation": 1},
    ),
    (
        "vex/openvex/openvex-go-vex/pkg/vex/testdata/v020-2.vex.json",
        "openvex 0.2.0",
        {"under_investigation": 1},
    ),
    (
        "vex/openvex/openvex-go-vex/pkg/vex/testdata/vex.yaml",
        "expected a JSON VEX document (OpenVEX, CycloneDX, CSAF), found invalid JSON (line 1 column 2: no digit after sign)",
        None,
    ),
    ("vex/openvex/aquasecurity-trivy/.vex/oci.openvex.json", "openvex 0.2.0", {"not_affected": 7}),
    (
        "vex/openvex/aquasecurity-trivy/.vex/trivy.openvex.json",
        "openvex 0.2.0",
        {"not_affected": 21},
    ),
]


def test_the_table_lists_every_real_document() -> None:
    on_disk = {
        str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file() and p.suffix != ".md"
    }
    on_disk = {p for p in on_disk if not p.endswith("LICENSE")}
    assert on_disk == {path for path, _, _ in EXPECTED}


@pytest.mark.parametrize(("path", "outcome", "statuses"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_real_document(path: str, outcome: str, statuses: dict[str, int] | None) -> None:
    data = (REAL / path).read_bytes()
    if statuses is None:
        with pytest.raises(VexError) as caught:
            read_vex(data, path)
        error = caught.value
        assert error.where.startswith(path)
        where = error.where.split(": ", 1)[1] if ": " in error.where else ""
        assert (f"{where} {error.reason}" if where else error.reason) == outcome
        return
    document = read_vex(data, path)
    assert f"{document.format} {document.spec_version}" == outcome
    assert dict(Counter(str(s.status) for s in document.statements)) == statuses
    assert document.signature is None


CISA = Path("vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-1")


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("vex-affected.json", VexStatus.AFFECTED),
        ("vex-fixed.json", VexStatus.FIXED),
        ("vex-not_affected.json", VexStatus.NOT_AFFECTED),
        ("vex-under_investigation.json", VexStatus.UNDER_INVESTIGATION),
    ],
)
def test_cisa_use_case_1_states_its_status(name: str, status: VexStatus) -> None:
    document = read_vex((REAL / CISA / name).read_bytes(), name)
    (statement,) = document.statements
    assert statement.vulnerability == "CVE-2021-44228"
    assert statement.status is status
    assert statement.products[0].value.startswith("product-")


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("2022-evd-uc-01-a-001.json", VexStatus.AFFECTED),
        ("2022-evd-uc-01-f-001.json", VexStatus.FIXED),
        ("2022-evd-uc-01-na-001.json", VexStatus.NOT_AFFECTED),
        ("2022-evd-uc-01-ui-001.json", VexStatus.UNDER_INVESTIGATION),
    ],
)
def test_csaf_use_case_1_states_its_status(name: str, status: VexStatus) -> None:
    path = REAL / "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex" / name
    document = read_vex(path.read_bytes(), name)
    (statement,) = document.statements
    assert (statement.vulnerability, statement.status) == ("CVE-2021-44228", status)
    assert document.author == "Example Company ProductCERT"
    if status is VexStatus.NOT_AFFECTED:
        assert statement.impact == "Class with vulnerable code was removed before shipping."


def test_csaf_relationship_names_the_component_and_flag_justifies() -> None:
    path = "vex/csaf/aquasecurity-trivy/pkg/vex/testdata/csaf-relationships.json"
    (statement,) = read_vex((REAL / path).read_bytes(), path).statements
    purls = {p.value for p in statement.products if p.kind == "purl"}
    assert purls == {"pkg:golang/github.com/aquasecurity/go-transitive@v4.0.0"}
    assert statement.justification == "vulnerable_code_cannot_be_controlled_by_adversary"


def test_openvex_aliases_and_subcomponents() -> None:
    path = "vex/openvex/aquasecurity-trivy/.vex/trivy.openvex.json"
    document = read_vex((REAL / path).read_bytes(), path)
    first = document.statements[0]
    assert first.vulnerability == "GO-2024-2575"
    assert first.aliases == ("CVE-2024-26147", "GHSA-r53h-jv2g-vpx6")
    # the product is listed with subcomponents: the statement is about them
    assert [p.value for p in first.products] == ["pkg:golang/helm.sh/helm/v3"]
    assert first.justification == "vulnerable_code_not_in_execute_path"
    assert document.author == "Aqua Security"
