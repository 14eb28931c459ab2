"""Pages for people on `assay serve`: search, CVEs, products, criteria, the API description.

`assay.web.app.create_web_app(store)` composes them with the NVD API app; everything is
rendered on the server from Jinja2 templates shipped in this package, with no request to
any other site.
"""
