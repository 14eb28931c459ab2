"""Errors of the NVD client. Every failure leaves the client as one of these.

    ClientError (assay.errors)
    └── NvdClientError              anything this client raises on purpose, except bad arguments
        ├── NvdApiError             the service answered with an error status (`status`, `message`)
        │   └── NvdRateLimitError   403 (NVD's throttle) or 429, still refused after every retry
        ├── NvdTransportError       no usable answer: connection refused or reset, truncated body
        │   └── NvdTimeoutError     no complete answer within `request_timeout`
        ├── NvdResponseError        a 2xx body that is not an NVD API 2.0 result
        │   └── NvdResponseTooLarge an answer past the size caps (not retried)
        └── NvdRedirectError        a redirect to another origin (not followed)

Bad arguments raise `InvalidQuery` (a `ValueError` and an `assay.errors.QueryError`) before
anything is sent. httpx exceptions are translated once, where requests are sent.
"""

from __future__ import annotations

from assay.errors import ClientError
from assay.urls import redact_url


class NvdClientError(ClientError):
    """Talking to an NVD-compatible service failed."""


class NvdApiError(NvdClientError):
    """The service answered with a non-success status.

    `message` is NVD's `message` response header (NVD sends errors as a 404 with an empty
    body and the reason in that header), or the body text when there is no header.
    """

    def __init__(self, status: int, message: str, url: str) -> None:
        self.status = status
        self.message = message
        self.url = url = redact_url(url)
        detail = f": {message}" if message else ""
        super().__init__(f"NVD API answered HTTP {status} for GET {url}{detail}")


class NvdRateLimitError(NvdApiError):
    """Throttled (403 from NVD, 429 elsewhere) on every attempt."""


class NvdTransportError(NvdClientError):
    """The request did not get a complete answer (connection error, truncated body)."""

    def __init__(self, message: str, url: str) -> None:
        self.url = url = redact_url(url)
        super().__init__(f"GET {url}: {message}")

    def diagnostics(self) -> str:
        """The message plus the underlying cause, if any."""
        cause = self.__cause__
        return f"{self}\n  cause: {cause!r}" if cause is not None else str(self)


class NvdTimeoutError(NvdTransportError):
    """No complete answer within `request_timeout`."""


class NvdResponseError(NvdClientError):
    """A success response whose body is not a valid NVD API 2.0 result."""


class NvdResponseTooLarge(NvdResponseError):
    """An answer larger than the client's caps (on the wire or decoded): reading stopped
    there. Not retried: the upstream would send the same again."""

    def __init__(self, message: str, url: str) -> None:
        self.url = url = redact_url(url)
        super().__init__(f"GET {url}: {message}")


class NvdRedirectError(NvdClientError):
    """A redirect the client does not follow: to another origin (scheme, host and port;
    the API key would go with it), or one too many."""

    def __init__(self, message: str, url: str) -> None:
        self.url = url = redact_url(url)
        super().__init__(f"GET {url}: {message}")
