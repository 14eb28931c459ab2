"""The published snapshots of `assay serve --snapshots DIR` (`assay.snapshot.publish`).

    GET /api/snapshots             the series' index: {"format", "store", "snapshots":
    GET /api/snapshots/            [{"name", "since", "generation", "records", "bytes",
    GET /api/snapshots/index.json    "sha256", "created", "signatures"}]}
    GET /api/snapshots/{name}      a listed snapshot file, or one of its signatures

The folder is read on each request (the index is small, and `assay store export
--publish DIR` replaces it at once): a new snapshot is served as soon as it is listed. A
name that the index does not list is a 404, whatever the folder holds; files are served
with their length, and ranges, as any static file server serves them.
"""

from __future__ import annotations

from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from assay.snapshot.format import SnapshotError
from assay.snapshot.publish import FILE_NAME, INDEX_NAME, SnapshotIndex, read_index

PATH = "/api/snapshots"
_METHODS = ["GET", "HEAD"]


def snapshot_routes(folder: str | None) -> list[BaseRoute]:
    """The routes of the series in `folder`; none without one."""
    if folder is None:
        return []
    published = Path(folder)

    async def listing(request: Request) -> Response:
        try:
            index = await run_in_threadpool(read_index, published)
        except (SnapshotError, OSError) as error:
            return JSONResponse({"message": f"the snapshot index: {error}"}, status_code=503)
        return Response(
            index.to_bytes(),
            media_type="application/json",
            headers={"Cache-Control": "no-cache"},
        )

    async def file(request: Request) -> Response:
        name = str(request.path_params["name"])
        if name == INDEX_NAME:
            return await listing(request)
        try:
            index = await run_in_threadpool(read_index, published)
        except (SnapshotError, OSError):
            index = SnapshotIndex(None, ())
        if not FILE_NAME.fullmatch(name) or name not in _listed(index):
            return JSONResponse({"message": f"no published snapshot named {name!r:.80}"}, 404)
        path = published / name
        if not path.is_file():
            return JSONResponse({"message": f"{name}: listed but missing"}, status_code=404)
        media = "application/json" if name.endswith(".json") else "application/zstd"
        return FileResponse(path, media_type=media, headers={"Cache-Control": "no-cache"})

    return [
        Route(PATH, listing, methods=_METHODS),
        Route(PATH + "/", listing, methods=_METHODS),
        Route(PATH + "/{name}", file, methods=_METHODS),
    ]


def _listed(index: SnapshotIndex) -> set[str]:
    names = {entry.name for entry in index.snapshots}
    for entry in index.snapshots:
        names.update(entry.signatures.values())
    return names
