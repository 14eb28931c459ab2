"""Schemathesis against the server's own `/openapi.json`: generated requests (valid and
invalid values of every documented parameter) on every documented operation, each
answer checked: no server error, a documented status, content type, headers and body.

Shared by the test suite (a bounded run) and `bench schemathesis` (>= 10,000 requests
per store). Not a benchmark itself (no `bench_` prefix).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CHECK_NAMES = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)
MAX_KEPT_FAILURES = 20


@dataclass
class FuzzReport:
    requests: int = 0
    server_errors: int = 0
    violations: int = 0
    failures: list[str] = field(default_factory=list)
    by_operation: dict[str, int] = field(default_factory=dict)
    resolved_away: int = 0  # generated paths the HTTP client resolves to another path


def fuzz(app: Any, *, examples: int, seed: int = 0) -> FuzzReport:
    """`examples` generated requests per operation and generation mode (positive and
    negative), sent to the ASGI `app` in process."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis import GenerationMode
    from schemathesis.checks import Failure, FailureGroup, ServerError, not_a_server_error
    from schemathesis.specs.openapi import checks as openapi_checks

    checks = [not_a_server_error] + [getattr(openapi_checks, name) for name in CHECK_NAMES[1:]]
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    report = FuzzReport()
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            given(operation.as_strategy(generation_mode=mode))(
                settings(
                    max_examples=examples,
                    deadline=None,
                    database=None,
                    suppress_health_check=list(HealthCheck),
                    phases=[Phase.generate],
                )(_sender(report, operation.label, checks, (Failure, FailureGroup, ServerError)))
            )()
    return report


def _sender(report: FuzzReport, label: str, checks: list[Any], kinds: tuple[Any, Any, Any]) -> Any:
    failure_type, group_type, server_error = kinds

    def send(case: Any) -> None:
        if _leaves_its_path(case):
            # `/v1/vulns/../..` is sent as `/` (RFC 3986 removes dot segments): that
            # request never reaches the operation, so its answer is not the operation's.
            report.resolved_away += 1
            return
        report.requests += 1
        report.by_operation[label] = report.by_operation.get(label, 0) + 1
        try:
            case.call_and_validate(checks=checks)
        except (group_type, failure_type) as error:  # counted; the run goes on
            found = error.exceptions if isinstance(error, group_type) else [error]
            for failure in found:
                if isinstance(failure, server_error):
                    report.server_errors += 1
                else:
                    report.violations += 1
                if len(report.failures) < MAX_KEPT_FAILURES:
                    report.failures.append(
                        f"{label} {case.path_parameters!r} {case.query!r}: {failure}"[:400]
                    )

    return send


def _leaves_its_path(case: Any) -> bool:
    """A path parameter holding a `.` or `..` segment, which moves the request elsewhere."""
    values = (case.path_parameters or {}).values()
    return any(part in {".", ".."} for value in values for part in str(value).split("/"))
