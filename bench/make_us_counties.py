#!/usr/bin/python3
"""Real boundaries for bench/search_comparison.py: the 3,085 counties of the 48 contiguous US states
and Washington DC, with generated records.

Needs R's `maps` package (Debian: `apt-get install --no-install-recommends r-cran-maps`) for the
boundaries and the cities, and /usr/bin/python3 (osgeo, numpy). From anywhere:

    /usr/bin/python3 bench/make_us_counties.py --out /tmp/vbas-us-counties

writes into --out the same three files as bench/make_counties.py (kept when made with the same
parameters):
  regions.gpkg   layer `regions`: one (multi)polygon per county, EPSG:5070 (NAD83 / Conus Albers, metres),
                 field region_id (text: "state,county" as `maps` names it). The boundaries are `maps`'s
                 `county` database (US Census, 1990 boundaries, simplified): real shapes, sizes from the
                 small eastern counties to the large western ones, coastal islands, counties in
                 several pieces (the `maps` names "county:part" joined into one region).
  records.gpkg   attribute-only table `records`: region_id and the four QIs of make_counties.py.
  counties.json  the parameters and what came out.

Records per county (generated: no real records): a rural part (RURAL_PER_KM2 times the county's area)
plus the population of the `maps` package's `us.cities` (the 1,005 US cities above 40,000 people) whose
point lies in the county, times log-normal noise, scaled to about --records in total (at least
--min-records per county). QIs: make_counties.py's marginals mixed by position across the country
(more "east" going east and north) times a factor per state (the state is the province).
"""

import argparse
import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import time

import numpy as np
from osgeo import gdal, ogr, osr

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_counties as mc  # noqa: E402  (the QIs, their marginals, the records writer, the kept files)

ogr.UseExceptions()
FORMAT_VERSION = 1  # bump when the generator changes, so kept files are regenerated
EPSG = 5070
RURAL_PER_KM2 = 7.5  # about the US rural population over its land area

# R prints each polygon of map("county", fill = TRUE) as "name<TAB>x y,x y,..." (its pieces are separated
# by NA), then a line "CITIES" and us.cities as CSV. Written here because no Debian package reads the
# `maps` database outside R.
R_DUMP = r"""
suppressMessages(library(maps))
m <- map("county", fill = TRUE, plot = FALSE)
piece <- cumsum(is.na(m$x)) + 1
keep <- !is.na(m$x)
xy <- split(paste(m$x[keep], m$y[keep]), piece[keep])
cat(paste(m$names, vapply(xy, paste, "", collapse = ","), sep = "\t"), sep = "\n")
cat("CITIES\n")
data(us.cities)
write.csv(us.cities[, c("pop", "lat", "long")], stdout(), row.names = FALSE)
"""


def read_maps():
    """({county name: [rings as "x y" lists]}, [(pop, lon, lat)]) from R's maps package."""
    try:
        out = subprocess.run(["Rscript", "-e", R_DUMP], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("R's maps package is needed: apt-get install --no-install-recommends r-cran-maps (%s)" % e)
    polygons, cities = out.split("CITIES\n")
    counties = {}
    for line in polygons.strip().split("\n"):
        name, coords = line.split("\t")
        counties.setdefault(name.split(":")[0], []).append(coords)
    rows = csv.DictReader(io.StringIO(cities))
    return counties, [(float(r["pop"]), float(r["long"]), float(r["lat"])) for r in rows]


def projection():
    lonlat, albers = osr.SpatialReference(), osr.SpatialReference()
    lonlat.ImportFromEPSG(4326)
    lonlat.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    albers.ImportFromEPSG(EPSG)
    return osr.CoordinateTransformation(lonlat, albers)


@contextlib.contextmanager
def quiet_gdal():
    """GDAL's warnings off (IsValid() prints every self-intersection it finds)."""
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        yield
    finally:
        gdal.PopErrorHandler()


def county_geometry(rings, to_albers):
    """One MultiPolygon in EPSG:5070 from a county's rings (made valid: `maps` rings may touch)."""
    multi = ogr.Geometry(ogr.wkbMultiPolygon)
    for coords in rings:
        multi.AddGeometry(ogr.CreateGeometryFromWkt("POLYGON((%s,%s))" % (coords, coords.split(",")[0])))
    with quiet_gdal():
        geom = multi if multi.IsValid() else multi.MakeValid()
    geom = ogr.ForceToMultiPolygon(geom.Buffer(0))
    geom.Transform(to_albers)
    return geom


def records_per_county(args, geoms, cities, to_albers, rng):
    area = np.array([g.GetArea() for g in geoms]) / 1e6
    urban = np.zeros(len(geoms))
    for pop, lon, lat in cities:
        point = ogr.Geometry(ogr.wkbPoint)
        point.AddPoint_2D(lon, lat)
        point.Transform(to_albers)
        for i, g in enumerate(geoms):
            if g.Contains(point):
                urban[i] += pop
                break
    weight = (RURAL_PER_KM2 * area + urban) * rng.lognormal(0.0, 0.35, size=len(geoms))
    return mc.scaled_records(weight, args), area, int(np.count_nonzero(urban))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--records", type=int, default=380_000, help="about this many records in total")
    parser.add_argument("--min-records", type=int, default=5, help="records of the smallest county, at least")
    parser.add_argument("--force", action="store_true", help="regenerate even if the files exist")
    args = parser.parse_args()

    paths, params = mc.cached_paths(args, ("regions.gpkg", "records.gpkg", "counties.json"), "counties.json",
                                    FORMAT_VERSION)
    if paths is None:
        return
    t0 = time.monotonic()
    rng = np.random.default_rng(args.seed)
    rings, cities = read_maps()
    names = sorted(rings)
    to_albers = projection()
    geoms = [county_geometry(rings[name], to_albers) for name in names]
    mc.mk.write_polygons(paths["regions.gpkg"], names, geoms, epsg=EPSG, kind=ogr.wkbMultiPolygon)
    n, area, with_cities = records_per_county(args, geoms, cities, to_albers, rng)
    centre = np.array([g.Centroid().GetPoint_2D() for g in geoms])
    low, high = centre.min(axis=0), centre.max(axis=0)
    states = sorted({name.split(",")[0] for name in names})
    province = np.array([states.index(name.split(",")[0]) for name in names])
    marginals = mc.county_marginals(centre, province, rng, box=(low[0], low[1], *(high - low)))
    mc.write_records(paths["records.gpkg"], names, n, marginals, rng)
    summary = {
        "parameters": params, "regions": len(names), "states": len(states),
        "in_pieces": sum(1 for g in geoms if g.GetGeometryCount() > 1), "with_cities": with_cities,
        "records": int(n.sum()), "qi_fields": mc.QI_FIELDS,
        "qi_categories": {q: mc.categories(q) for q in mc.QI_FIELDS},
        **mc.spread(n, area),
        "seconds": round(time.monotonic() - t0, 1),
    }
    with open(paths["counties.json"], "w") as f:
        json.dump(summary, f, indent=1)
    print("wrote %d counties (%d in several pieces) and %d records in %.1f s to %s" % (
        len(names), summary["in_pieces"], summary["records"], summary["seconds"], args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
