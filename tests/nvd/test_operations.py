"""Every reader of the operations table sees all five operations, with the table's facts:
the client, the server's routes and query parsers, the OpenAPI document, the importer, the
sync and the command line."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from tests.live import serving

from assay.errors import QueryError
from assay.nvd.client import MAX_RESULTS_PER_PAGE, NvdClient
from assay.nvd.client._params import parameter_names
from assay.nvd.cpe_query import parse_cpe_query
from assay.nvd.cpematch_query import parse_cpematch_query
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.history_query import parse_history_query
from assay.nvd.ingest.importer import HANDLERS
from assay.nvd.ingest.sources import LIST_KEYS
from assay.nvd.operations import OPERATION_NAMES, OPERATIONS, Operation
from assay.nvd.server.openapi import openapi_document
from assay.nvd.source_query import parse_source_query
from assay.nvd.storage import open_store
from assay.nvd.sync import parse_kinds

PARSERS: dict[str, Callable[[Iterable[tuple[str, str]]], Any]] = {
    "cves": parse_cve_query,
    "cvehistory": parse_history_query,
    "cpes": parse_cpe_query,
    "cpematch": parse_cpematch_query,
    "source": parse_source_query,
}


def test_the_table_holds_the_five_operations() -> None:
    assert OPERATION_NAMES == ("cves", "cvehistory", "cpes", "cpematch", "source")
    assert [op.checkpoint_key for op in OPERATIONS.values()] == [
        "sync.cves",
        "sync.cvehistory",
        "sync.cpes",
        "sync.cpematch",
        "sync.source",
    ]


def test_the_openapi_document_has_the_five_paths() -> None:
    document = orjson.loads(openapi_document())
    for operation in OPERATIONS.values():
        described = document["paths"][f"/rest/json{operation.path}"]["get"]
        assert described["operationId"] == operation.method
        names = [p["name"] for p in described["parameters"] if p["in"] == "query"]
        assert names == list(operation.wire_names)
        envelope = described["responses"]["200"]["content"]["application/json"]["schema"]
        assert envelope["properties"]["resultsPerPage"]["maximum"] == operation.max_page
        assert envelope["properties"]["format"] == {"const": operation.format_name}
        assert operation.list_key in envelope["required"]


@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATION_NAMES)
def test_the_server_parses_exactly_the_table_s_parameters(operation: Operation) -> None:
    parse = PARSERS[operation.name]
    assert parse([]).results_per_page == operation.max_page
    assert parse([("resultsPerPage", str(operation.max_page))]).results_per_page == (
        operation.max_page
    )
    with pytest.raises(QueryError, match="resultsPerPage"):
        parse([("resultsPerPage", str(operation.max_page + 1))])
    with pytest.raises(QueryError, match="Invalid parameter"):
        parse([("notAParameter", "1")])
    refused = []
    for parameter in operation.parameters:
        try:
            parse([(parameter.wire, "")])
        except QueryError as error:  # (an empty value may be refused; the name may not)
            refused.append(error.reason)
    assert not [reason for reason in refused if "Invalid parameter" in reason]


@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATION_NAMES)
def test_the_filter_key_is_equal_for_every_page_of_one_query(operation: Operation) -> None:
    parse = PARSERS[operation.name]
    first = parse([("sinceGeneration", "3")])
    later = parse([("sinceGeneration", "3"), ("startIndex", "40"), ("resultsPerPage", "20")])
    assert type(first).largest_page() == operation.max_page
    assert later.filter_key == first.filter_key == first
    assert hash(later.filter_key) == hash(first)
    assert later.filter_key != parse([("sinceGeneration", "4")]).filter_key
    assert later.filter_key != parse([]).filter_key


@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATION_NAMES)
def test_the_client_takes_the_table_s_parameters_and_pages(operation: Operation) -> None:
    assert parameter_names(operation.name) == tuple(p.name for p in operation.parameters)
    assert MAX_RESULTS_PER_PAGE[operation.name] == operation.max_page
    assert callable(getattr(NvdClient, operation.method))


def test_the_server_routes_and_the_client_reads_every_operation(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(url).close()
    with serving(url) as root, NvdClient(wait_time=0, base_url=f"{root}/rest/json") as client:
        for operation in OPERATIONS.values():
            answer = httpx.get(f"{root}/rest/json{operation.path}")
            assert answer.status_code == 200, operation.name
            body = answer.json()
            assert body["format"] == operation.format_name
            assert body[operation.list_key] == []
            page = getattr(client, operation.method)()
            assert page.total_results == 0
            assert getattr(page, operation.result_attr) == []


def test_the_importer_and_the_sync_know_every_operation() -> None:
    for operation in OPERATIONS.values():
        assert LIST_KEYS[operation.list_key] == (operation.record, operation.wrapper)
        assert operation.record in HANDLERS
    assert parse_kinds(",".join(OPERATION_NAMES)) == OPERATION_NAMES


def test_the_sync_command_names_every_page_size(capsys: pytest.CaptureFixture[str]) -> None:
    from assay._cli import main

    with pytest.raises(SystemExit):
        main(["nvd", "sync", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for operation in OPERATIONS.values():
        assert f"{operation.max_page} {operation.label}" in shown
