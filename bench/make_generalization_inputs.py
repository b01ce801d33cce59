#!/usr/bin/python3
"""Inputs of bench/generalization_comparison.sh: the ~3,000 counties of bench/make_counties.py with
about 3.3 M records over four QIs with hierarchies, and the hierarchy files.

Run with /usr/bin/python3 (osgeo, numpy, scipy):

    /usr/bin/python3 bench/make_generalization_inputs.py --out /tmp/vbas-generalization

writes into --out (deterministic; kept when made with the same parameters, inputs.json records them):
  regions.gpkg      the counties of make_counties.py (its geography, the same seed), field region_id.
  records.gpkg      table `records`: region_id, age_group (18 five-year groups, 0-4 ... 80-84, 85+),
                    sex (F, M), marital (5 values) and income (10 bands of 10,000, the last 90000+),
                    all text, one row per record, in random order.
  age_group.csv     ARX hierarchy: 5-year group, 10 years, 20 years, 40 years (80+ apart), *.
  marital.csv       ARX hierarchy: the status, partnered or not, *.
  inputs.json       the parameters and the counts.
Each county draws its records from national marginals times a factor of its province (Dirichlet, as
make_counties.py), so small classes are common in small counties, as in a real national table.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_counties as mc  # noqa: E402  (the geography)
import make_inputs as mk  # noqa: E402  (region ids, polygons and records writers)

FORMAT_VERSION = 1
AGES = ["%d-%d" % (a, a + 4) for a in range(0, 85, 5)] + ["85+"]
AGE_WEIGHTS = [5.2, 5.5, 5.6, 5.9, 6.6, 6.8, 6.7, 6.5, 6.3, 6.4, 7.0, 7.1, 6.4, 5.5, 4.3, 3.0, 2.1, 2.2]
MARITAL = ["single", "married", "common-law", "separated or divorced", "widowed"]
MARITAL_WEIGHTS = [38.0, 40.0, 10.0, 7.0, 5.0]
INCOMES = ["%d-%d" % (i, i + 9999) for i in range(0, 90000, 10000)] + ["90000+"]
INCOME_WEIGHTS = [14.0, 15.0, 14.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 8.0]
QIS = {"age_group": (AGES, AGE_WEIGHTS), "sex": (["F", "M"], [51.0, 49.0]), "marital": (MARITAL, MARITAL_WEIGHTS),
       "income": (INCOMES, INCOME_WEIGHTS)}
CONCENTRATION = 60.0  # provinces differ more than make_counties.py's: more small classes in places


def age_hierarchy():
    rows = []
    for i, value in enumerate(AGES):
        if value == "85+":
            rows.append([value, "80+", "80+", "80+"])
            continue
        lo = 5 * i
        ten, twenty, forty = lo // 10 * 10, lo // 20 * 20, lo // 40 * 40
        rows.append([value, "%d-%d" % (ten, ten + 9) if ten < 80 else "80+", "%d-%d" % (twenty, twenty + 19) if twenty < 80 else "80+",
                     "%d-%d" % (forty, forty + 39) if forty < 80 else "80+"])
    return [r + ["*"] for r in rows]


def marital_hierarchy():
    partnered = {"married", "common-law"}
    return [[m, "partnered" if m in partnered else "not partnered", "*"] for m in MARITAL]


def write_hierarchy(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(";".join(row) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--regions", type=int, default=3000)
    parser.add_argument("--records", type=int, default=3_300_000)
    parser.add_argument("--provinces", type=int, default=8)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    names = ("regions.gpkg", "records.gpkg", "age_group.csv", "marital.csv", "inputs.json")
    paths, params = mc.cached_paths(args, names, "inputs.json", FORMAT_VERSION)
    if paths is None:
        return
    t0 = time.monotonic()
    rng = np.random.default_rng(args.seed)
    geo = argparse.Namespace(regions=args.regions, cells_per_county=7, islands=6, archipelago=8, records=args.records,
                             min_records=5, gradient=4.0)
    counties, cells, points, kinds = mc.build_geography(geo, rng)
    geoms = mc.county_geometries(counties, cells)
    ids = mk.region_ids(len(counties))
    mk.write_polygons(paths["regions.gpkg"], ids, geoms)
    centre = np.array([g.Centroid().GetPoint_2D() for g in geoms])
    n, _ = mc.records_per_county(geo, centre, geoms, counties, rng)
    centres = centre[rng.choice(len(centre), size=args.provinces, replace=False)]
    province = np.argmin(np.hypot(centre[:, None, 0] - centres[None, :, 0], centre[:, None, 1] - centres[None, :, 1]), axis=1)
    region = np.repeat(np.arange(len(n), dtype=np.int32), n)
    columns = []
    for name, (values, weights) in QIS.items():
        mean = np.asarray(weights, float) / sum(weights)
        factor = np.array([rng.dirichlet(mean * CONCENTRATION) / mean for _ in range(args.provinces)])
        p = mean[None, :] * factor[province]
        cum = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)[region]
        codes = (rng.random(len(region))[:, None] > cum[:, :-1]).sum(axis=1).astype(np.int8)
        columns.append((np.asarray(values, dtype=object), codes))
    order = rng.permutation(len(region))
    mk.write_records_table(paths["records.gpkg"], np.asarray(ids, dtype=object), region[order], list(QIS),
                           [(values, codes[order]) for values, codes in columns])
    write_hierarchy(paths["age_group.csv"], age_hierarchy())
    write_hierarchy(paths["marital.csv"], marital_hierarchy())
    summary = {"parameters": params, "regions": len(counties), "records": int(n.sum()), "qi_fields": list(QIS),
               "seconds": round(time.monotonic() - t0, 1)}
    with open(paths["inputs.json"], "w") as f:
        json.dump(summary, f, indent=1)
    print("wrote %d regions and %d records in %.1f s to %s" % (len(counties), summary["records"], summary["seconds"], args.out),
          file=sys.stderr)


if __name__ == "__main__":
    main()
