"""The public surface of `assay.nvd.client`."""

from __future__ import annotations

import inspect

from assay.errors import ClientError, QueryError
from assay.nvd import client


def test_all_names_exist_and_nothing_private_is_exported() -> None:
    for name in client.__all__:
        assert hasattr(client, name), name
        assert not name.startswith("_")
    assert sorted(client.__all__) == sorted(set(client.__all__))


def test_errors_derive_from_the_assay_root() -> None:
    assert issubclass(client.NvdApiError, ClientError)
    assert issubclass(client.NvdTransportError, ClientError)
    assert issubclass(client.NvdResponseError, ClientError)
    assert issubclass(client.InvalidQuery, QueryError)
    assert issubclass(client.InvalidQuery, ValueError)


def test_constructor_names_and_defaults_match_the_reference() -> None:
    for cls in (client.NvdClient, client.AsyncNvdClient):
        params = inspect.signature(cls).parameters
        assert [(p.name, p.default) for p in list(params.values())[:5]] == [
            ("wait_time", 6000),
            ("request_timeout", 20000),
            ("max_retries", 3),
            ("api_key", None),
            ("base_url", "https://services.nvd.nist.gov/rest/json"),
        ]
        assert all(p.kind is p.KEYWORD_ONLY for p in list(params.values())[5:])


def test_sync_and_async_clients_have_the_same_methods() -> None:
    def public(cls: type) -> set[str]:
        return {n for n in vars(cls) if not n.startswith("_")} - {"close", "aclose"}

    assert public(client.NvdClient) == public(client.AsyncNvdClient)
    for name in (
        "get_cves",
        "get_cve_history",
        "get_cpes",
        "get_cpe_match",
        "get_all_cves",
        "get_all_cve_history",
        "get_all_cpes",
        "get_all_cpe_match",
        "iter_cves",
        "iter_cve_history",
        "iter_cpes",
        "iter_cpe_match",
    ):
        assert name in public(client.NvdClient)
