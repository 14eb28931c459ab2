"""OSV records (https://ossf.github.io/osv-schema/): reading, version orders, evaluation.

    from assay.osv.record import read_record
    from assay.osv.evaluate import affected_hit

    record = read_record(data, "PYSEC-2021-335.yaml")
    hits = [affected_hit(entry, "4.1") for entry in record.affected]

Pure: nothing here touches a store, the network or `assay.verify`.
"""
