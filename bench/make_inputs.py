#!/usr/bin/python3
"""Synthetic VBAS benchmark inputs (run with /usr/bin/python3: it needs osgeo and scipy).

    /usr/bin/python3 bench/make_inputs.py --regions 1000 --out /tmp/vbas-bench/1000

writes into the output directory
  regions.gpkg  layer `regions`: polygons, EPSG:3857, field region_id (text). The polygons are the
                Voronoi tessellation of N clustered random points, clipped to a rectangle.
  records.gpkg  attribute-only table `records`: region_id, the QIs age_group (9 values), sex (2),
                race (5), insurance (4), marital (5), and diagnosis (20 values, the sensitive
                attribute). 400-700 records per region, uniform per region; the rows are in random
                order (not grouped by region).
  points.gpkg   with --points N only: layer `points` of N geocoded records (EPSG:3857 points drawn
                uniformly in the regions' rectangle, no region field) with the same QIs and diagnosis.
Deterministic: the same --regions and --seed give the same files. Existing files for the same
parameters are kept (a stamp file records the parameters), so re-runs cost nothing.
"""

import argparse
import os
import sys
import time

import numpy as np
from osgeo import gdal, ogr, osr
from scipy.spatial import Voronoi

gdal.UseExceptions()
ogr.UseExceptions()
# GeoPackage write speed: no fsync, a large page cache; rows are committed in big transactions.
gdal.SetConfigOption("OGR_SQLITE_SYNCHRONOUS", "OFF")
gdal.SetConfigOption("OGR_SQLITE_JOURNAL", "OFF")
gdal.SetConfigOption("OGR_SQLITE_CACHE", "512")

RECORDS_MIN, RECORDS_MAX = 400, 700
TRANSACTION_ROWS = 100_000

# QI categories and their (unnormalized) frequencies: skewed like real registries.
QIS = [
    ("age_group", ["0-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80+"],
     [11, 12, 13, 14, 14, 13, 11, 8, 4]),
    ("sex", ["F", "M"], [51, 49]),
    ("race", ["white", "asian", "black", "indigenous", "other"], [62, 18, 8, 5, 7]),
    ("insurance", ["public", "private", "mixed", "none"], [55, 30, 10, 5]),
    ("marital", ["single", "married", "common-law", "divorced", "widowed"], [38, 40, 10, 7, 5]),
]
DIAGNOSES = ["A%02d" % i for i in range(20)]

# The extent: a 200 km x 150 km rectangle in EPSG:3857 (around Ottawa).
XMIN, YMIN = -8_550_000.0, 5_600_000.0
WIDTH, HEIGHT = 200_000.0, 150_000.0


def clustered_points(n, rng):
    """n distinct points in the rectangle: 80% in Gaussian clusters (towns), 20% uniform."""
    clusters = max(1, int(round(np.sqrt(n) / 3)))
    centres = rng.uniform([XMIN, YMIN], [XMIN + WIDTH, YMIN + HEIGHT], size=(clusters, 2))
    spread = rng.uniform(0.01, 0.06, size=clusters) * WIDTH
    out = np.empty((0, 2))
    while len(out) < n:
        m = n - len(out)
        in_cluster = rng.random(m) < 0.8
        c = rng.integers(0, clusters, size=m)
        p = np.where(in_cluster[:, None],
                     centres[c] + rng.normal(size=(m, 2)) * spread[c][:, None],
                     rng.uniform([XMIN, YMIN], [XMIN + WIDTH, YMIN + HEIGHT], size=(m, 2)))
        inside = (p[:, 0] > XMIN) & (p[:, 0] < XMIN + WIDTH) & (p[:, 1] > YMIN) & (p[:, 1] < YMIN + HEIGHT)
        out = np.unique(np.vstack([out, p[inside]]), axis=0)
    out = out[:n]
    rng.shuffle(out)
    return out


def clipped_voronoi_cells(points):
    """Voronoi cells of points clipped to the rectangle: mirroring the points across the four sides
    makes every original cell finite and bounded exactly by the rectangle."""
    x, y = points[:, 0], points[:, 1]
    xmax, ymax = XMIN + WIDTH, YMIN + HEIGHT
    mirrored = np.vstack([points,
                          np.column_stack([2 * XMIN - x, y]), np.column_stack([2 * xmax - x, y]),
                          np.column_stack([x, 2 * YMIN - y]), np.column_stack([x, 2 * ymax - y])])
    vor = Voronoi(mirrored)
    cells = []
    for i in range(len(points)):
        ring = vor.vertices[vor.regions[vor.point_region[i]]]
        ring[:, 0] = np.clip(ring[:, 0], XMIN, xmax)  # rounding noise only
        ring[:, 1] = np.clip(ring[:, 1], YMIN, ymax)
        centre = ring.mean(axis=0)
        ring = ring[np.argsort(np.arctan2(ring[:, 1] - centre[1], ring[:, 0] - centre[0]))]  # convex: sort by angle
        cells.append(ring)
    return cells


def region_ids(n):
    return ["R%06d" % (i + 1) for i in range(n)]


def write_polygons(path, ids, geoms, epsg=3857, kind=ogr.wkbPolygon):
    """A regions layer "regions" (region_id, geometries of type kind) in EPSG:epsg."""
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(epsg)
    ds = ogr.GetDriverByName("GPKG").CreateDataSource(path)
    layer = ds.CreateLayer("regions", srs, kind, options=["FID=fid", "GEOMETRY_NAME=geom"])
    layer.CreateField(ogr.FieldDefn("region_id", ogr.OFTString))
    defn = layer.GetLayerDefn()
    layer.StartTransaction()
    for rid, geom in zip(ids, geoms):
        f = ogr.Feature(defn)
        f.SetFieldString(0, rid)
        f.SetGeometry(geom)
        layer.CreateFeature(f)
    layer.CommitTransaction()
    ds = None


def write_regions(path, points, ids):
    rings = ("POLYGON((" + ",".join("%.3f %.3f" % (px, py) for px, py in ring) + ",%.3f %.3f))" % tuple(ring[0])
             for ring in clipped_voronoi_cells(points))
    write_polygons(path, ids, (ogr.CreateGeometryFromWkt(wkt) for wkt in rings))


def write_records(path, n_regions, ids, rng):
    per_region = rng.integers(RECORDS_MIN, RECORDS_MAX + 1, size=n_regions)
    region = np.repeat(np.arange(n_regions, dtype=np.int32), per_region)
    rng.shuffle(region)
    total = len(region)
    columns = []
    for _, values, weights in QIS:
        w = np.asarray(weights, dtype=float)
        columns.append((np.asarray(values, dtype=object), rng.choice(len(values), size=total, p=w / w.sum()).astype(np.int8)))
    columns.append((np.asarray(DIAGNOSES, dtype=object), rng.integers(0, len(DIAGNOSES), size=total).astype(np.int8)))
    write_records_table(path, np.asarray(ids, dtype=object), region, [name for name, _, _ in QIS] + ["diagnosis"], columns)
    return total


def write_records_table(path, id_values, region, names, columns):
    """The attribute-only table `records`: region_id (id_values[region]), then one text field per name,
    each (values, codes) column giving values[codes]; written in big transactions."""
    ds = ogr.GetDriverByName("GPKG").CreateDataSource(path)
    layer = ds.CreateLayer("records", None, ogr.wkbNone, options=["FID=fid"])
    layer.CreateField(ogr.FieldDefn("region_id", ogr.OFTString))
    for name in names:
        layer.CreateField(ogr.FieldDefn(name, ogr.OFTString))
    f = ogr.Feature(layer.GetLayerDefn())
    total = len(region)
    for start in range(0, total, TRANSACTION_ROWS):
        stop = min(total, start + TRANSACTION_ROWS)
        chunk = [id_values[region[start:stop]]] + [values[codes[start:stop]] for values, codes in columns]
        layer.StartTransaction()
        for row in zip(*chunk):
            for i, value in enumerate(row):
                f.SetFieldString(i, value)
            f.SetFID(-1)
            layer.CreateFeature(f)
        layer.CommitTransaction()
    ds = None


def write_points(path, n, rng):
    """The table `points`: n records with a point each and no region field, the QIs and diagnosis."""
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(3857)
    ds = ogr.GetDriverByName("GPKG").CreateDataSource(path)
    layer = ds.CreateLayer("points", srs, ogr.wkbPoint, options=["FID=fid", "GEOMETRY_NAME=geom", "SPATIAL_INDEX=NO"])
    names = [name for name, _, _ in QIS] + ["diagnosis"]
    for name in names:
        layer.CreateField(ogr.FieldDefn(name, ogr.OFTString))
    xy = rng.uniform([XMIN, YMIN], [XMIN + WIDTH, YMIN + HEIGHT], size=(n, 2))
    columns = []
    for _, values, weights in QIS:
        w = np.asarray(weights, dtype=float)
        columns.append(np.asarray(values, dtype=object)[rng.choice(len(values), size=n, p=w / w.sum())])
    columns.append(np.asarray(DIAGNOSES, dtype=object)[rng.integers(0, len(DIAGNOSES), size=n)])
    f = ogr.Feature(layer.GetLayerDefn())
    for start in range(0, n, TRANSACTION_ROWS):
        layer.StartTransaction()
        for i in range(start, min(n, start + TRANSACTION_ROWS)):
            for c, column in enumerate(columns):
                f.SetFieldString(c, column[i])
            point = ogr.Geometry(ogr.wkbPoint)
            point.AddPoint_2D(float(xy[i, 0]), float(xy[i, 1]))
            f.SetGeometry(point)
            f.SetFID(-1)
            layer.CreateFeature(f)
        layer.CommitTransaction()
    ds = None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--regions", type=int, required=True)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--force", action="store_true", help="regenerate even if the files exist")
    parser.add_argument("--points", type=int, default=0, help="also write points.gpkg with this many geocoded records")
    args = parser.parse_args()
    if args.regions < 2:
        parser.error("--regions must be at least 2")

    os.makedirs(args.out, exist_ok=True)
    regions_path = os.path.join(args.out, "regions.gpkg")
    records_path = os.path.join(args.out, "records.gpkg")
    stamp_path = os.path.join(args.out, "inputs.stamp")
    stamp = "regions=%d seed=%d records=%d-%d format=2\n" % (args.regions, args.seed, RECORDS_MIN, RECORDS_MAX)
    if not args.force and os.path.exists(regions_path) and os.path.exists(records_path) and os.path.exists(stamp_path):
        with open(stamp_path) as s:
            if s.read() == stamp:
                print("inputs exist, kept: %s" % args.out, file=sys.stderr)
                ensure_points(args)
                return
    for p in (regions_path, records_path, stamp_path):
        if os.path.exists(p):
            os.remove(p)

    rng = np.random.default_rng(args.seed)
    ids = region_ids(args.regions)
    t0 = time.monotonic()
    write_regions(regions_path, clustered_points(args.regions, rng), ids)
    t1 = time.monotonic()
    total = write_records(records_path, args.regions, ids, rng)
    t2 = time.monotonic()
    with open(stamp_path, "w") as s:
        s.write(stamp)
    print("wrote %d regions (%.1f s) and %d records (%.1f s) to %s" % (args.regions, t1 - t0, total, t2 - t1, args.out), file=sys.stderr)
    ensure_points(args)


def ensure_points(args):
    """points.gpkg of --points records, kept when it exists for the same count and seed."""
    if args.points <= 0:
        return
    path = os.path.join(args.out, "points.gpkg")
    stamp_path = os.path.join(args.out, "points.stamp")
    stamp = "points=%d seed=%d\n" % (args.points, args.seed)
    if os.path.exists(path) and os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        return
    if os.path.exists(path):
        os.remove(path)
    t0 = time.monotonic()
    write_points(path, args.points, np.random.default_rng(args.seed + 1))
    with open(stamp_path, "w") as s:
        s.write(stamp)
    print("wrote %d points (%.1f s) to %s" % (args.points, time.monotonic() - t0, path), file=sys.stderr)


if __name__ == "__main__":
    main()
