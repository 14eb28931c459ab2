"""`/verify`: attestations and a policy posted from a form, checked as `assay verify` would.

GET shows the form (the shipped policies to choose from, the size limit); POST reads the
form in memory (`assay.web.uploads`), runs `assay.web.verify_run` in a worker thread and
renders its typed outcome, or answers it as JSON when the form asks for it
(`format=json`). Nothing posted is kept. The verification half is imported on the first
post, not when the server starts.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, Final

import orjson

from assay.errors import InputError
from assay.web.form_pages import UploadFormPages
from assay.web.upload_pool import Budget
from assay.web.uploads import Form, UploadedFile

if TYPE_CHECKING:
    from assay.web.verify_run import VerifyOutcome

VERIFY_FORM_BYTES: Final = 4 * 1024 * 1024
"""The whole posted form: attestations, policy and digests together."""
PASTED_ATTESTATION: Final = "pasted attestation"
PASTED_POLICY: Final = "pasted policy"


@lru_cache(maxsize=1)
def shipped_policies() -> tuple[tuple[str, str], ...]:
    """(name, description) of each policy shipped with assay (`assay policies list`)."""
    from assay import _yaml_strict
    from assay.errors import InputError
    from assay.policy.builtin import builtin_policies

    result = []
    for policy in builtin_policies():
        try:
            document = _yaml_strict.load(policy.path.read_bytes(), policy.name)
        except (OSError, InputError):
            document = None
        description = document.get("description") if isinstance(document, dict) else None
        result.append((policy.name, description if isinstance(description, str) else ""))
    return tuple(result)


def _named(files: list[UploadedFile], fallback: str) -> list[tuple[str, bytes]]:
    named: list[tuple[str, bytes]] = []
    for index, item in enumerate(files, start=1):
        name = item.filename or f"{fallback} {index}"
        named.append((name, item.data))
    return named


class VerifyPages(UploadFormPages["VerifyOutcome"]):
    template = "verify.html"
    form_bytes = VERIFY_FORM_BYTES

    def _page_context(self) -> dict[str, Any]:
        return {"policies": shipped_policies()}

    def _work(self, form: Form) -> Callable[[Budget], VerifyOutcome]:
        verify_request = self._request(form)
        from assay.web.verify_run import run_verification

        return partial(run_verification, verify_request, self.store)

    def _shown(self, outcome: VerifyOutcome) -> dict[str, Any]:
        return {"outcome": outcome}

    def _json(self, outcome: VerifyOutcome) -> bytes:
        return orjson.dumps(outcome.to_dict(), default=str, option=orjson.OPT_INDENT_2)

    @staticmethod
    def _request(form: Form) -> Any:
        from assay.web.verify_run import VerifyRequest, parse_digests

        attestations = tuple(_attestations(form))  # named first when both are missing
        builtin, policy_file = _policy_choice(form)
        return VerifyRequest(
            attestations=attestations,
            policy_builtin=builtin or None,
            policy_file=policy_file,
            digests=parse_digests(form.value("digests")),
        )


def _attestations(form: Form) -> list[Any]:
    """The uploaded attestation files and the pasted one: at least one."""
    from assay.web.verify_run import InputFile

    attestations = [
        InputFile(name, data) for name, data in _named(form.files_of("attestation"), "upload")
    ]
    pasted = form.value("attestation_text")
    if pasted:
        attestations.append(InputFile(PASTED_ATTESTATION, pasted.encode("utf-8")))
    if not attestations:
        raise InputError("attestation", "expected an attestation: upload a file or paste its JSON")
    return attestations


def _policy_choice(form: Form) -> tuple[str | None, Any]:
    """Exactly one policy: a shipped one by name, or one uploaded or pasted file."""
    from assay.web.verify_run import InputFile

    builtin = form.value("policy")
    uploads = _named(form.files_of("policy_file"), "policy upload")
    policy_text = form.value("policy_text")
    given = [bool(builtin), bool(uploads), bool(policy_text)]
    if sum(given) != 1 or len(uploads) > 1:
        raise InputError(
            "policy",
            "expected exactly one policy: a shipped one from the list, one uploaded file, "
            f"or pasted text; found {sum(given) + max(0, len(uploads) - 1)}",
        )
    names = {name for name, _ in shipped_policies()}
    if builtin and builtin not in names:
        raise InputError(
            "policy", f"expected one of {', '.join(sorted(names))}, found {builtin[:80]!r}"
        )
    if uploads:
        return None, InputFile(*uploads[0])
    if policy_text:
        return None, InputFile(PASTED_POLICY, policy_text.encode("utf-8"))
    return builtin, None
