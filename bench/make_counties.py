#!/usr/bin/python3
"""A national-like geography of about 3,000 "counties" with records, for bench/search_comparison.py.

Run with /usr/bin/python3 (osgeo, numpy, scipy), from anywhere:

    /usr/bin/python3 bench/make_counties.py --out /tmp/vbas-counties

writes into --out (deterministic: the same --seed and options give the same files; files made with the
same parameters are kept, counties.json records them, so a second run costs nothing):
  regions.gpkg   layer `regions`: one polygon per county, EPSG:3857 (projected), field region_id (text).
  records.gpkg   attribute-only table `records`: region_id and the four QIs QI_FIELDS (text), one row
                 per record, in random order.
  counties.json  the parameters and what came out (counts, records per county, islands, provinces).
With --sampling-fraction p, the records are drawn from a generated population instead, and two census
tables are written beside them:
  population4.csv  region_id, the four QIs and n: the residents of each (county, QI values) cell that
                   has any; population3.csv the same over the first three QIs (race summed).
  Each county has about its records / p residents, spread over the cells by the county's marginals
  (a multinomial draw), and each resident is a record with probability p (a binomial draw per cell), so
  every cell holds at least as many residents as records.

The geography (inside bench/make_inputs.py's 200 km x 150 km rectangle, with its functions):
  - a fine tessellation: the Voronoi cells of --cells-per-county x --regions clustered points (80 % in
    Gaussian towns), so cells are small in towns and large in the countryside;
  - a sea along the east side behind a wavy coastline; the cells whose point lies in the sea are water;
  - mainland counties: seeds drawn uniformly among the land cells, each land cell joining the seed it
    reaches by the shortest path over adjacent cells, every step's length multiplied by a random
    factor (log-normal): counties are unions of about --cells-per-county cells, contiguous, with ragged,
    non-convex borders (some enclose others), small in towns and large in the countryside. Land cells
    no seed can reach (cut off by the coastline) are water too;
  - islands: --islands single-cell counties scattered off the coast and an archipelago of
    --archipelago single-cell counties close together; every island's neighbouring cells are water, so
    it shares no border with any other county.
Records per county: a west-to-east gradient (x --gradient) times an urban factor (the county's cell
density, to the power 0.7) times log-normal noise, scaled to about --records in total; the report
gives the spread (the smallest to the largest county differ by far more than 20 times).
QIs: age_group (9), sex (2), insurance (2: public; private, mixed or none merged) and race (5), the
categories of bench/paper_comparison.py; the first three are the 3-QI selection. Each county draws its
records from its own marginals: the "west" and "east" marginals of bench/paper_comparison.py, mixed
smoothly by position (more east going east and north), times a factor of its province (--provinces
irregular provinces, the nearest of random centres; each province's factors drawn once, Dirichlet as in
paper_comparison.py).
Calibrated (2026-11-26, the defaults): 6-20 s to generate; at 909 aggregates (3,000 / 3.3, MODEL=3
FIXED_SITES=909, K=5) balanced density suppresses 3.9 % of the records with the first three QIs and
25.7 % with all four, the regime of the real counties (3.2 % and 27.5 % by the paper's method).
"""

import argparse
import json
import os
import sys
import time

import numpy as np
from osgeo import ogr
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_inputs as mk  # noqa: E402  (the rectangle, clustered points, Voronoi cells, records writer)
import paper_comparison as pc  # noqa: E402  (the west/east marginals and the province Dirichlet)

# The QIs in order (the first three are the 3-QI selection) and their categories: those of
# bench/paper_comparison.py, insurance merged into two (public; private, mixed or none).
QI_MERGE = {"age_group": None, "sex": None, "insurance": {"public": [0], "private": [1, 2, 3]}, "race": None}
QI_FIELDS = list(QI_MERGE)


def categories(name):
    return list(QI_MERGE[name]) if QI_MERGE[name] else pc.CATEGORIES[name]


def base_marginals(area, name):
    """paper_comparison's marginals of an area for one QI, merged as QI_MERGE says, normalised."""
    m = np.asarray(pc.AREAS[area]["marginals"][name], float)
    if QI_MERGE[name]:
        m = np.array([m[idx].sum() for idx in QI_MERGE[name].values()])
    return m / m.sum()
FORMAT_VERSION = 1  # bump when the generator changes, so kept files are regenerated


def coast_x(y, phase):
    """The coastline: x of the shore at height y (the sea lies east of it)."""
    t = (y - mk.YMIN) / mk.HEIGHT
    return mk.XMIN + mk.WIDTH * (0.84 + 0.05 * np.sin(2 * np.pi * 1.3 * t + phase[0])
                                 + 0.025 * np.sin(2 * np.pi * 4.1 * t + phase[1]))


def cell_adjacency(cells):
    """Pairs of cells sharing an edge of positive length (the Voronoi vertices are shared exactly)."""
    owner = {}
    pairs = set()
    for i, ring in enumerate(cells):
        for a, b in zip(ring, np.roll(ring, -1, axis=0)):
            if np.hypot(*(a - b)) < 1e-6:
                continue
            key = tuple(sorted([(round(a[0], 3), round(a[1], 3)), (round(b[0], 3), round(b[1], 3))]))
            j = owner.setdefault(key, i)
            if j != i:
                pairs.add((min(i, j), max(i, j)))
    return np.array(sorted(pairs), dtype=np.int64)


def pick_islands(points, sea, neighbours, phase, rng, singles, archipelago):
    """Sea cells that become island counties: none next to land or to another island. Single islands
    scattered 3-25 km off the coast, and an archipelago of cells nearest a point 12 km offshore."""
    blocked = ~sea.copy()  # land, and later the islands and their neighbours
    for i in np.flatnonzero(~sea):
        blocked[neighbours[i]] = True  # sea touching land stays water

    def take(candidates):
        chosen = []
        for i in candidates:
            if not blocked[i]:
                chosen.append(int(i))
                blocked[i] = True
                blocked[neighbours[i]] = True
        return chosen

    offshore = points[:, 0] - coast_x(points[:, 1], phase)
    ay = mk.YMIN + mk.HEIGHT * rng.uniform(0.2, 0.8)
    centre = np.array([coast_x(np.array([ay]), phase)[0] + 12_000.0, ay])
    near = np.argsort(np.hypot(*(points - centre).T))
    arch = take([i for i in near[:60] if sea[i]])[:archipelago]
    far = np.flatnonzero(sea & (offshore > 3_000) & (offshore < 25_000) & (np.hypot(*(points - centre).T) > 30_000))
    single = take(rng.permutation(far))[:singles]
    return single, arch


def build_geography(args, rng):
    """(county cell lists, cell rings, kind per county: 'mainland' | 'island' | 'archipelago')."""
    phase = rng.uniform(0, 2 * np.pi, size=2)
    n_cells = args.regions * args.cells_per_county
    points = mk.clustered_points(n_cells, rng)
    cells = mk.clipped_voronoi_cells(points)
    pairs = cell_adjacency(cells)
    neighbours = [[] for _ in range(n_cells)]
    for a, b in pairs:
        neighbours[a].append(b)
        neighbours[b].append(a)
    neighbours = [np.array(v, dtype=np.int64) for v in neighbours]
    sea = points[:, 0] > coast_x(points[:, 1], phase)
    single, arch = pick_islands(points, sea, neighbours, phase, rng, args.islands, args.archipelago)
    n_main = args.regions - len(single) - len(arch)
    land = np.flatnonzero(~sea)
    seeds = rng.choice(land, size=n_main, replace=False)
    # Shortest paths over land cells, each step's length times a log-normal factor: ragged borders.
    keep = ~sea[pairs[:, 0]] & ~sea[pairs[:, 1]]
    a, b = pairs[keep, 0], pairs[keep, 1]
    w = np.hypot(*(points[a] - points[b]).T) * rng.lognormal(0.0, 0.6, size=len(a))
    graph = coo_matrix((np.concatenate([w, w]), (np.concatenate([a, b]), np.concatenate([b, a]))),
                       shape=(n_cells, n_cells)).tocsr()
    dist, _, source = dijkstra(graph, directed=False, indices=seeds, min_only=True, return_predecessors=True)
    seed_index = {int(s): i for i, s in enumerate(seeds)}
    members = [[] for _ in range(n_main)]
    for c in land:
        if np.isfinite(dist[c]):
            members[seed_index[int(source[c])]].append(int(c))
    counties = members + [[c] for c in single] + [[c] for c in arch]
    kinds = ["mainland"] * n_main + ["island"] * len(single) + ["archipelago"] * len(arch)
    return counties, cells, points, kinds


def county_geometries(counties, cells):
    out = []
    for members in counties:
        multi = ogr.Geometry(ogr.wkbMultiPolygon)
        for c in members:
            ring = ogr.Geometry(ogr.wkbLinearRing)
            for x, y in cells[c]:
                ring.AddPoint_2D(float(x), float(y))
            ring.CloseRings()
            poly = ogr.Geometry(ogr.wkbPolygon)
            poly.AddGeometry(ring)
            multi.AddGeometry(poly)
        geom = multi.UnionCascaded()
        if geom.GetGeometryType() != ogr.wkbPolygon:
            raise RuntimeError("a county is not one polygon: %s" % geom.GetGeometryName())
        out.append(geom)
    return out


def records_per_county(args, centre, geoms, counties, rng):
    """The population gradient: west-to-east factor, urban factor (cells per km2), noise."""
    area = np.array([g.GetArea() for g in geoms]) / 1e6
    density = np.array([len(m) for m in counties]) / area
    x = (centre[:, 0] - mk.XMIN) / mk.WIDTH
    weight = args.gradient ** x * (density / np.median(density)) ** 0.7 * rng.lognormal(0.0, 0.35, size=len(area))
    return scaled_records(weight, args), area


def scaled_records(weight, args):
    """Records per county in proportion to weight, about args.records in all, at least args.min_records each."""
    return np.maximum(np.round(weight * args.records / weight.sum()), args.min_records).astype(np.int64)


def spread(n, area):
    """What counties.json says of the records per county and the county areas (km2)."""
    pct = lambda v, q: float(np.percentile(v, q))  # noqa: E731
    return {"records_per_county": {"min": int(n.min()), "p5": pct(n, 5), "median": pct(n, 50), "p95": pct(n, 95),
                                   "max": int(n.max()), "p95_over_p5": pct(n, 95) / pct(n, 5)},
            "county_area_km2": {"p5": pct(area, 5), "median": pct(area, 50), "p95": pct(area, 95)}}


def nearest_provinces(centre, rng, provinces):
    """The province of each county: the nearest of `provinces` counties drawn at random."""
    pc_centres = centre[rng.choice(len(centre), size=provinces, replace=False)]
    return np.argmin(np.hypot(centre[:, None, 0] - pc_centres[None, :, 0],
                              centre[:, None, 1] - pc_centres[None, :, 1]), axis=1)


def county_marginals(centre, province, rng, box=(mk.XMIN, mk.YMIN, mk.WIDTH, mk.HEIGHT)):
    """Per county and QI: the west/east marginals of paper_comparison.py mixed by position in box (x, y,
    width, height), times the factor of the county's province (0, 1, ...: Dirichlet around the mean
    marginals, paper_comparison's concentration, drawn once per province)."""
    t = np.clip(0.75 * (centre[:, 0] - box[0]) / box[2] + 0.25 * (centre[:, 1] - box[1]) / box[3], 0, 1)
    out = {}
    for name in QI_FIELDS:
        west, east = base_marginals("west", name), base_marginals("east", name)
        mean = (west + east) / 2
        factor = np.array([rng.dirichlet(mean * pc.DIRICHLET_CONCENTRATION) / mean
                           for _ in range(province.max() + 1)])
        p = ((1 - t)[:, None] * west + t[:, None] * east) * factor[province]
        out[name] = p / p.sum(axis=1, keepdims=True)
    return out


def write_records(path, ids, n, marginals, rng):
    region = np.repeat(np.arange(len(n), dtype=np.int32), n)
    columns = []
    for name in QI_FIELDS:
        cum = np.cumsum(marginals[name], axis=1)[region]
        codes = (rng.random(len(region))[:, None] > cum[:, :-1]).sum(axis=1).astype(np.int8)
        columns.append((np.asarray(categories(name), dtype=object), codes))
    order = rng.permutation(len(region))
    mk.write_records_table(path, np.asarray(ids, dtype=object), region[order], QI_FIELDS,
                           [(values, codes[order]) for values, codes in columns])


def write_population(paths, ids, n, marginals, rng, fraction):
    """Residents per (county, QI values) cell, about n / fraction per county by the county's marginals
    (the QIs independent within a county), and the records drawn from them: each resident with
    probability fraction. Writes the records and the two census tables; returns the records per county."""
    sizes = [len(categories(name)) for name in QI_FIELDS]
    classes = int(np.prod(sizes))
    probs = np.ones((len(n), classes))
    codes = np.indices(sizes).reshape(len(sizes), -1)  # the codes of each class, the first QI slowest
    for q, name in enumerate(QI_FIELDS):
        probs *= marginals[name][:, codes[q]]
    residents = np.array([rng.multinomial(int(round(c / fraction)), p / p.sum()) for c, p in zip(n, probs)])
    drawn = rng.binomial(residents, fraction)
    cell = np.repeat(np.arange(drawn.size), drawn.ravel())
    order = rng.permutation(cell.size)
    region, cls = np.divmod(cell[order], classes)
    mk.write_records_table(paths["records.gpkg"], np.asarray(ids, dtype=object), region, QI_FIELDS,
                           [(np.asarray(categories(name), dtype=object), codes[q][cls].astype(np.int16)) for q, name in enumerate(QI_FIELDS)])
    for path, qis in ((paths["population4.csv"], len(QI_FIELDS)), (paths["population3.csv"], 3)):
        table = residents.reshape((len(n),) + tuple(sizes))
        table = table.sum(axis=tuple(range(1 + qis, 1 + len(sizes)))) if qis < len(sizes) else table
        with open(path, "w") as f:
            f.write(",".join(["region_id"] + QI_FIELDS[:qis] + ["n"]) + "\n")
            for index in zip(*np.nonzero(table)):
                values = [categories(name)[i] for name, i in zip(QI_FIELDS, index[1:])]
                f.write(",".join([ids[index[0]]] + values + [str(int(table[index]))]) + "\n")
    return drawn.sum(axis=1)


def cached_paths(args, names, summary, version):
    """The output files (names in args.out) and the parameters recorded in the summary file: (None,
    params) when files made with the same parameters exist (kept), else the old files removed."""
    os.makedirs(args.out, exist_ok=True)
    paths = {k: os.path.join(args.out, k) for k in names}
    params = {k: v for k, v in vars(args).items() if k not in ("out", "force")}
    params["format"] = version
    if not args.force and all(os.path.exists(p) for p in paths.values()):
        with open(paths[summary]) as f:
            if json.load(f).get("parameters") == params:
                print("inputs exist, kept: %s" % args.out, file=sys.stderr)
                return None, params
    for p in paths.values():
        if os.path.exists(p):
            os.remove(p)
    return paths, params


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--regions", type=int, default=3000, help="counties, islands included (default %(default)s)")
    parser.add_argument("--cells-per-county", type=int, default=7)
    parser.add_argument("--islands", type=int, default=6, help="single islands off the coast")
    parser.add_argument("--archipelago", type=int, default=8, help="islands of the archipelago")
    parser.add_argument("--records", type=int, default=380_000, help="about this many records in total")
    parser.add_argument("--min-records", type=int, default=5, help="records of the smallest county, at least")
    parser.add_argument("--gradient", type=float, default=4.0, help="records per county, east over west")
    parser.add_argument("--provinces", type=int, default=8)
    parser.add_argument("--sampling-fraction", type=float, default=None,
                        help="draw the records from a generated population at this fraction, and write its census tables")
    parser.add_argument("--force", action="store_true", help="regenerate even if the files exist")
    args = parser.parse_args()

    names = ("regions.gpkg", "records.gpkg", "counties.json") + (("population3.csv", "population4.csv") if args.sampling_fraction else ())
    paths, params = cached_paths(args, names, "counties.json", FORMAT_VERSION)
    if paths is None:
        return

    t0 = time.monotonic()
    rng = np.random.default_rng(args.seed)
    counties, cells, points, kinds = build_geography(args, rng)
    geoms = county_geometries(counties, cells)
    ids = mk.region_ids(len(counties))
    mk.write_polygons(paths["regions.gpkg"], ids, geoms)
    centre = np.array([g.Centroid().GetPoint_2D() for g in geoms])
    n, area = records_per_county(args, centre, geoms, counties, rng)
    province = nearest_provinces(centre, rng, args.provinces)
    marginals = county_marginals(centre, province, rng)
    if args.sampling_fraction:
        n = write_population(paths, ids, n, marginals, rng, args.sampling_fraction)
    else:
        write_records(paths["records.gpkg"], ids, n, marginals, rng)
    convex = np.array([g.GetArea() / g.ConvexHull().GetArea() for g in geoms])
    pct = lambda v, q: float(np.percentile(v, q))  # noqa: E731
    summary = {
        "parameters": params,
        "regions": len(counties), "fine_cells": len(cells),
        "mainland": kinds.count("mainland"), "islands": kinds.count("island"),
        "archipelago": kinds.count("archipelago"), "island_ids": [i for i, k in zip(ids, kinds) if k != "mainland"],
        "records": int(n.sum()), "qi_fields": QI_FIELDS,
        "qi_categories": {q: categories(q) for q in QI_FIELDS},
        **spread(n, area),
        "area_over_convex_hull": {"p5": pct(convex, 5), "median": pct(convex, 50),
                                  "share_below_0.9": float(np.mean(convex < 0.9))},
        "provinces": int(args.provinces), "counties_per_province": np.bincount(province).tolist(),
        "seconds": round(time.monotonic() - t0, 1),
    }
    with open(paths["counties.json"], "w") as f:
        json.dump(summary, f, indent=1)
    print("wrote %d counties (%d islands, %d in the archipelago) and %d records in %.1f s to %s" % (
        len(counties), summary["islands"], summary["archipelago"], summary["records"], summary["seconds"],
        args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
