"""Page walks that never mix two data generations: `If-Match` on the generation.

A client walking a listing page by page (`startIndex` 0, 2000, 4000, ...) sends, from
its second page on, `If-Match: W/"g<N>"` where N is the `x-assay-generation` of its
first page. A page is then answered only when it was read at exactly generation N; else
412 Precondition Failed, whose `message` names both generations and tells the client to
begin the walk again (its `x-assay-generation` is the generation a new walk would start
at). Behind replicas, the server reads such a page from a copy at least N new
(`Store.read_at_generation(at_least=N)`), so a replica that lags does not cause a restart.
`If-Match: *` and no `If-Match` ask nothing. A look-up of one CVE by `cveId` that
carries `If-Match` skips the shortcut (`shortcut.py`) and is held to the same rule.
"""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.responses import Response

from assay.nvd.server.responses import GENERATION_HEADER, nvd_error

RESTART_STATUS = 412
_TAG = re.compile(r'\s*(?:W/)?"g([0-9]{1,18})"\s*')
NOT_A_GENERATION = -1


def walk_generation(headers: Headers) -> int | None:
    """The generation `If-Match` asks for; None when it asks for none (absent or `*`);
    NOT_A_GENERATION when it names no generation of this server (no page can match)."""
    value = headers.get("if-match")
    if value is None or value.strip() == "*":
        return None
    match = _TAG.fullmatch(value.split(",", 1)[0])
    return int(match.group(1)) if match else NOT_A_GENERATION


def restart(wanted: int, found: int) -> Response:
    """412: the walk began at generation `wanted`; the page was read at `found`."""
    if wanted == NOT_A_GENERATION:
        reason = (
            'If-Match names no data generation: expected W/"g<N>", N the x-assay-generation '
            "of the walk's first page"
        )
    else:
        reason = (
            f"The walk began at generation {wanted}; this server now reads generation "
            f"{found}: begin the walk again at startIndex=0"
        )
    answer = nvd_error(reason, status=RESTART_STATUS)
    if found >= 0:
        answer.headers[GENERATION_HEADER] = str(found)
    return answer
