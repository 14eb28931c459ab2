"""OSV records (https://ossf.github.io/osv-schema/): reading, version orders, evaluation,
and moving them in and out of a store.

    from assay.osv.record import read_record
    from assay.osv.evaluate import affected_hit

    record = read_record(data, "PYSEC-2021-335.yaml")
    hits = [affected_hit(entry, "4.1") for entry in record.affected]

Pure modules: `record` (the strict reader), `versions` (each ecosystem's order),
`evaluate` (the schema's evaluation), `names` (purls as OSV packages, normalized names),
`index` (what a store indexes). With I/O: `importer` (files, folders, archives into a
store), `sync` (osv.dev's bucket layout over HTTP), `export` (a store's records as files).
Nothing here imports `assay.verify`; a store is used through the `Store` protocol.
"""
