"""The HTTP service over a store: the NVD API 2.0, osv.dev's API v1, `/metrics`.

`app.create_app(store, settings, service)` builds the API application (the web pages
wrap it: `assay.web.app`); each module has one job: `listings` and `openapi` describe the
operations of `assay.nvd.operations`, `responses` renders NVD's envelope, `service`,
`access`, `ratelimit`, `httpcache` and `compression` are the service's middleware,
`metrics` answers `/metrics`, `osv_api` the `/v1` paths, `memory` prepares a serving
process's allocator.
"""
