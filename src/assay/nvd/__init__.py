"""The NVD API 2.0 side of assay: records, queries, storage, import, server and client."""
