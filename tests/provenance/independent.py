"""The in-toto project's own parser (in-toto-attestation), as an independent check.

The statement is parsed into the in-toto Statement protobuf and validated with its
`validate()`; the predicate is parsed strictly into the SLSA provenance v1 protobuf
(unknown fields and malformed timestamps are errors there), and every resource
descriptor is validated by the in-toto ResourceDescriptor wrapper.
"""

from __future__ import annotations

from typing import Any

import orjson
from google.protobuf import json_format
from in_toto_attestation.predicates.provenance.v1 import provenance_pb2
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
from in_toto_attestation.v1.statement import Statement


def check_with_in_toto(payload: bytes) -> Any:
    """Parse and validate `payload`; returns the provenance protobuf. Raises on any problem."""
    document = orjson.loads(payload)
    statement = Statement.copy_from_pb(json_format.ParseDict(document, statement_pb2.Statement()))
    statement.validate()
    provenance = json_format.ParseDict(document["predicate"], provenance_pb2.Provenance())
    for descriptor in provenance.build_definition.resolved_dependencies:
        ResourceDescriptor.copy_from_pb(descriptor).validate()
    if not provenance.build_definition.build_type:
        raise ValueError("buildType required")
    if not provenance.run_details.builder.id:
        raise ValueError("runDetails.builder.id required")
    return provenance
