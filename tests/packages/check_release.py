"""Recounts a released GeoPackage table with Python's own sqlite3 (nothing of QGIS or VBAS):

  python3 check_release.py RELEASE.gpkg RECORDS.gpkg K QI...

Every record released carries an aggregate id and its QIs, every class (aggregate id and QIs) holds at
least K records, some records are released and none more than the input holds. Prints counts only.
"""
import sqlite3
import sys


def only_table(path):
    connection = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    tables = [row[0] for row in connection.execute("SELECT table_name FROM gpkg_contents")]
    if len(tables) != 1:
        sys.exit("%s holds %d tables, not one" % (path, len(tables)))
    return connection, '"%s"' % tables[0]


def main():
    release, records, k, qis = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    connection, table = only_table(release)
    keys = ['"%s"' % field for field in ["aggregate_id"] + qis]
    missing = connection.execute("SELECT count(*) FROM %s WHERE %s" % (
        table, " OR ".join("%s IS NULL" % key for key in keys))).fetchone()[0]
    sizes = [row[0] for row in connection.execute("SELECT count(*) FROM %s GROUP BY %s" % (table, ", ".join(keys)))]
    released = sum(sizes)
    source, source_table = only_table(records)
    total = source.execute("SELECT count(*) FROM %s" % source_table).fetchone()[0]
    print("== Release recount: %d of %d records released in %d classes, smallest %d (k = %d), %d without a class"
          % (released, total, len(sizes), min(sizes, default=0), k, missing))
    if missing or not sizes or min(sizes) < k or released > total:
        sys.exit("== FAILED: the release is not k-anonymous for k = %d" % k)


if __name__ == "__main__":
    main()
