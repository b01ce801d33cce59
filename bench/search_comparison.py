#!/usr/bin/python3
"""Fewer records lost at the same aggregate count: balanced density, ADC and the suppression optimiser.

Run from the repository root, after the build (`bash .ci/setup`), with /usr/bin/python3 (osgeo, numpy,
scipy):

    /usr/bin/python3 bench/search_comparison.py --out /tmp/search-comparison.md --json-out /tmp/search-comparison.json

Inputs (--geography): bench/make_counties.py's generated counties (about 3,000 irregular regions with
islands, a population gradient and QI marginals that differ by area; the default), or with
`--geography us-counties` bench/make_us_counties.py's 3,076 real US counties with generated records
(needs `apt-get install --no-install-recommends r-cran-maps`); generated into --data (kept when the
parameters are the same). For the 3-QI and the 4-QI selection, k = --k, every row asks for the same number of aggregates
(MODEL=3, FIXED_SITES = --sites, default the regions / 3.3, the aggregate count of the paper's method on the
real counties) and runs vbas:anonymize headless (`qgis_process.bin --json run`), one run at a time, on a
snapshot of the plugin installed in build/qgis-profile (copied into a temporary profile). ROWS below
lists the configurations: a row whose parameters the installed plugin does not know is reported as
"not available" and skipped.

Every row is recounted from its written outputs (ANONYMIZED, LOOKUP, SITE_POINTS, as GeoPackages in a
temporary folder), the input records and the regions' polygons, by code that shares nothing with the
plugin:
  suppressed   the input records minus the rows of ANONYMIZED; checked against the classes
               (aggregate, QI values) recounted from the input records through LOOKUP: the release must
               hold exactly the classes of k or more records, whole;
  smallest EC  the smallest class of ANONYMIZED (k-anonymous when >= k);
  aggregates   the aggregates of LOOKUP (each holds at least one region);
  compactness  eq. 20: the sum over all regions of the distance from the region's point (its centroid,
               the plugin's default REGION_POINT=0; a point on its surface for a row with REGION_POINT=1)
               to its aggregate's site, the SITE_POINTS point whose site_id LOOKUP gives the region;
  mean-point   the mean-point compactness (docs/method.md): the sum over all regions of the region's
               records times the distance from its point to its aggregate's records-weighted mean
               point; the same rule for every configuration, whatever its sites (no POPULATION_FIELD
               here, so the population basis is the records);
  NUE          eq. 22-23 over the released records (their regions recounted through LOOKUP);
  pieces       aggregates in several pieces: connected components of an aggregate's regions under
               shared borders of positive length, where the parts of the map that share no border
               (islands) are bridged by the shortest links between region points of different parts
               (Kruskal over the Delaunay edges of the region points, the "islands" rule of max-p tools);
  releasing nothing  aggregates with no row in ANONYMIZED.
Also the plugin's RUNTIME output and the wall time of the qgis_process call.

Writes a Markdown table (--out) with the command, machine and date, one row per QI selection x
configuration and the ratios to the plain balanced-density row (the paper's method); --json-out saves
the raw results, --from-json FILE rebuilds the table from them without running anything; --only LABEL
(repeatable) runs only the rows whose label contains it.
"""

import argparse
import datetime
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from osgeo import ogr
from scipy.spatial import Delaunay

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_counties as mc  # noqa: E402  (the QIs of the inputs)
import paper_comparison as pc  # noqa: E402  (profile snapshot, error lines, machine description)

ogr.UseExceptions()

# The configurations, one row each, for every QI selection: (label, vbas:anonymize parameters beyond the
# common ones). Booleans as qgis_process takes them ("true"). The first row is the paper's method.
ROWS = [
    ("balanced density (paper)", {"METHOD": 0}),
    ("balanced density, contiguous", {"METHOD": 0, "CONTIGUOUS": "true"}),
    ("ADC eq. 14", {"METHOD": 1, "OBJECTIVE": 0}),
    ("ADC eq. 14, contiguous", {"METHOD": 1, "OBJECTIVE": 0, "CONTIGUOUS": "true"}),
    ("ADC fewest suppressed", {"METHOD": 1, "OBJECTIVE": 1}),
    ("ADC fewest suppressed, contiguous", {"METHOD": 1, "OBJECTIVE": 1, "CONTIGUOUS": "true"}),
    ("suppression search (SEARCH, TIME_LIMIT 55 s)", {"SEARCH": "true", "TIME_LIMIT": 55, "CONTIGUOUS": "true",
                                                      "COMPACTNESS_BUDGET": 1.0, "RECORD_FLOOR": 0.25}),
    ("suppression search, RECORD_CEILING 3", {"SEARCH": "true", "TIME_LIMIT": 55, "CONTIGUOUS": "true",
                                              "COMPACTNESS_BUDGET": 1.0, "RECORD_FLOOR": 0.25, "RECORD_CEILING": 3}),
]
QI_SETS = [("3 QIs", mc.QI_FIELDS[:3]), ("4 QIs", mc.QI_FIELDS)]
# The measured targets (suppressed at most 0.75 x the paper's method, compactness within the budget, every
# aggregate in one piece, no more aggregates releasing nothing, the paper's method's aggregate count, within 60 s).
TARGET_SUPPRESSED, TARGET_COMPACTNESS, TARGET_SECONDS = 0.75, 1.0, 60.0
OUTPUTS = ("SITE_POINTS", "LOOKUP", "ANONYMIZED")
# --geography: the script that makes the inputs (in bench/), and its default folder.
GEOGRAPHIES = {"generated": "make_counties.py", "us-counties": "make_us_counties.py"}
DEFAULT_DATA = {"generated": "/tmp/vbas-counties", "us-counties": "/tmp/vbas-us-counties"}


def log(msg):
    print("[search_comparison %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# The inputs, read once


def read_table(path, sql):
    ds = ogr.Open(path)
    layer = ds.ExecuteSQL(sql)
    rows = [[f.GetField(i) for i in range(f.GetFieldCount())] for f in layer]
    ds.ReleaseResultSet(layer)
    return rows


def read_regions(path):
    """Region ids, polygons (clones) and centroids, in layer order."""
    ds = ogr.Open(path)
    ids, geoms = [], []
    for f in ds.GetLayer(0):
        ids.append(f.GetField("region_id"))
        geoms.append(f.GetGeometryRef().Clone())
    return ids, geoms, np.array([g.Centroid().GetPoint_2D() for g in geoms])


def shared_border_pairs(geoms):
    """Pairs of regions whose boundaries share a stretch of positive length (envelope sweep, then GEOS)."""
    env = np.array([g.GetEnvelope() for g in geoms])  # minx, maxx, miny, maxy
    order = np.argsort(env[:, 0], kind="stable")
    bounds = [g.Boundary() for g in geoms]
    pairs = []
    for n, i in enumerate(order):
        for j in order[n + 1:]:
            if env[j, 0] > env[i, 1]:
                break
            if env[j, 2] > env[i, 3] or env[j, 3] < env[i, 2] or not bounds[i].Intersects(bounds[j]):
                continue
            if bounds[i].Intersection(bounds[j]).Length() > 0:
                pairs.append((min(i, j), max(i, j)))
    return pairs


class UnionFind:
    def __init__(self, n):
        self.parent = list(range(n))

    def find(self, a):
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a == b:
            return False
        self.parent[max(a, b)] = min(a, b)
        return True


def island_bridges(n, pairs, points):
    """The shortest links joining the parts of the border graph: Kruskal over the Delaunay edges of the
    region points, starting from the parts."""
    uf = UnionFind(n)
    for a, b in pairs:
        uf.union(a, b)
    edges = set()
    for simplex in Delaunay(points).simplices:
        for a, b in ((0, 1), (1, 2), (0, 2)):
            edges.add((min(simplex[a], simplex[b]), max(simplex[a], simplex[b])))
    edges = sorted(edges, key=lambda e: (float(np.hypot(*(points[e[0]] - points[e[1]]))), e))
    return [(int(a), int(b)) for a, b in edges if uf.union(a, b)]


def load_inputs(data):
    t0 = time.monotonic()
    ids, geoms, points = read_regions(os.path.join(data, "regions.gpkg"))
    pairs = shared_border_pairs(geoms)
    bridges = island_bridges(len(ids), pairs, points)
    index = {rid: i for i, rid in enumerate(ids)}
    records = os.path.join(data, "records.gpkg")
    histograms = {}
    for label, qis in QI_SETS:
        rows = read_table(records, "SELECT region_id, %s, COUNT(*) FROM records GROUP BY region_id, %s" % (
            ", ".join(qis), ", ".join(qis)))
        histograms[label] = [(index[r[0]], tuple(r[1:-1]), r[-1]) for r in rows]
    total = sum(c for _, _, c in histograms[QI_SETS[0][0]])
    weights = {}
    for label, _ in QI_SETS:
        weights[label] = np.zeros(len(ids))
        for region, _, count in histograms[label]:
            weights[label][region] += count
    log("inputs read in %.1f s: %d regions, %d shared borders, %d island bridges, %d records" % (
        time.monotonic() - t0, len(ids), len(pairs), len(bridges), total))
    surface = np.array([g.PointOnSurface().GetPoint_2D() for g in geoms])
    return {"ids": ids, "index": index, "points": points, "surface": surface, "links": pairs + bridges,
            "bridges": len(bridges),
            "histograms": histograms, "weights": weights, "records": total}


# ---------------------------------------------------------------------------------------------------
# The recount of one run, from its outputs


def recount(inputs, qis, label, run_dir, k, region_point):
    """The measures of one run from its outputs; region_point is REGION_POINT (0 centroid, 1 on surface)."""
    n = len(inputs["ids"])
    lookup = read_table(os.path.join(run_dir, "lookup.gpkg"), "SELECT region_id, aggregate_id, site_id FROM lookup")
    agg = np.full(n, -1, dtype=np.int64)
    site = np.full(n, -1, dtype=np.int64)
    for rid, a, s in lookup:
        agg[inputs["index"][rid]], site[inputs["index"][rid]] = a, s
    missing = int((agg < 0).sum())
    sites = read_sites(os.path.join(run_dir, "site_points.gpkg"))
    released = {}
    for r in read_table(os.path.join(run_dir, "anonymized.gpkg"), "SELECT aggregate_id, %s, COUNT(*) FROM anonymized "
                        "GROUP BY aggregate_id, %s" % (", ".join(qis), ", ".join(qis))):
        released[(r[0],) + tuple(r[1:-1])] = r[-1]
    # The classes recounted from the input records through LOOKUP.
    classes = {}
    for region, cls, count in inputs["histograms"][label]:
        key = (int(agg[region]),) + cls
        classes[key] = classes.get(key, 0) + count
    expected = {key: c for key, c in classes.items() if c >= k}
    per_region = np.zeros(n)
    for region, cls, count in inputs["histograms"][label]:
        if (int(agg[region]),) + cls in expected:
            per_region[region] += count
    per_agg = {}
    for region in range(n):
        per_agg[int(agg[region])] = per_agg.get(int(agg[region]), 0.0) + per_region[region]
    nue = -sum(c * math.log2(c / per_agg[int(agg[r])]) for r, c in enumerate(per_region) if c > 0)
    site_xy = np.array([sites.get(int(s), (np.nan, np.nan)) for s in site])
    points = inputs["surface"] if int(region_point) == 1 else inputs["points"]
    compactness = float(np.sum(np.hypot(*(points - site_xy).T)))
    mean_point = mean_point_compactness(points, agg, inputs["weights"][label])
    sites_per_agg = {}
    for a, s in zip(agg, site):
        sites_per_agg.setdefault(int(a), set()).add(int(s))
    aggregates = set(int(a) for a in agg)
    rel_total = sum(released.values())
    return {
        "aggregates": len(aggregates),
        "released": rel_total,
        "suppressed": inputs["records"] - rel_total,
        "suppressed_pct": 100.0 * (inputs["records"] - rel_total) / inputs["records"],
        "smallest_ec": min(released.values()) if released else 0,
        "release_matches_recount": released == expected,
        "compactness": compactness,
        "mean_point": mean_point,
        "nue": nue,
        "pieces": aggregates_in_pieces(inputs, agg),
        "releasing_nothing": len(aggregates - {key[0] for key in released}),
        "regions_missing_from_lookup": missing,
        "sites_missing": int(np.isnan(site_xy[:, 0]).sum()),
        "aggregates_with_several_sites": sum(1 for v in sites_per_agg.values() if len(v) > 1),
    }


def mean_point_compactness(points, agg, weights):
    """Sum of w_r |r_p - m_u|, m_u the weighted mean point of aggregate u's regions."""
    total = 0.0
    for a in np.unique(agg):
        members = agg == a
        w = weights[members]
        if w.sum() > 0:
            mean = (points[members] * w[:, None]).sum(axis=0) / w.sum()
            total += float(np.sum(w * np.hypot(*(points[members] - mean).T)))
    return total


def read_sites(path):
    """site_id -> (x, y) of SITE_POINTS."""
    ds = ogr.Open(path)
    return {f.GetField("site_id"): f.GetGeometryRef().GetPoint_2D() for f in ds.GetLayer(0)}


def aggregates_in_pieces(inputs, agg):
    """Aggregates whose regions fall into more than one connected part (borders and island bridges)."""
    uf = UnionFind(len(agg))
    for a, b in inputs["links"]:
        if agg[a] == agg[b]:
            uf.union(a, b)
    parts = {}
    for r in range(len(agg)):
        parts.setdefault(int(agg[r]), set()).add(uf.find(r))
    return sum(1 for p in parts.values() if len(p) > 1)


# ---------------------------------------------------------------------------------------------------
# Runs


def known_parameters(env):
    out = subprocess.run([pc.QGIS_PROCESS, "--json", "help", "vbas:anonymize"], env=env, capture_output=True,
                         text=True, timeout=300)
    return set(json.loads(out.stdout[out.stdout.index("{"):])["parameters"])


def run_row(inputs, data, label, qis, row, params, args, env, work):
    run_dir = tempfile.mkdtemp(prefix="run-", dir=work)
    cmd = [pc.QGIS_PROCESS, "--json", "run", "vbas:anonymize", "--",
           "REGIONS=%s|layername=regions" % os.path.join(data, "regions.gpkg"), "REGION_ID=region_id",
           "RECORDS=%s|layername=records" % os.path.join(data, "records.gpkg"), "RECORD_REGION=region_id"]
    cmd += ["QI_FIELDS=%s" % q for q in qis]
    common = {"MODEL": 3, "FIXED_SITES": args.sites, "K": args.k, "SEED": args.run_seed}
    cmd += ["%s=%s" % kv for kv in list(common.items()) + list(params.items())]
    cmd += ["%s=%s" % (o, os.path.join(run_dir, o.lower() + ".gpkg")) for o in OUTPUTS]
    result = {"qis": label, "row": row, "parameters": dict(common, **params)}
    try:
        document, result["error"], result["wall"] = pc.run_json(cmd, env, args.timeout)
        if document:
            outputs = document["results"]
            info = document.get("log", {}).get("info", [])
            result["search_log"] = [line for line in (info if isinstance(info, list) else info.split("\n"))
                                    if line.startswith("Suppression search:")]
            result["plugin"] = {key: v for key, v in outputs.items() if isinstance(v, (int, float, str))
                                and not (isinstance(v, str) and os.sep in v)}
            result.update(recount(inputs, qis, label, run_dir, args.k, params.get("REGION_POINT", 0)))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    if result["error"]:
        log("%s / %s: FAILED %s" % (label, row, result["error"]))
    else:
        log("%s / %-34s aggregates %4d  suppressed %6d (%.2f%%)  pieces %d  nothing %d  RUNTIME %.1f s  wall %.1f s" % (
            label, row, result["aggregates"], result["suppressed"], result["suppressed_pct"], result["pieces"],
            result["releasing_nothing"], result["plugin"].get("RUNTIME") or 0, result["wall"]))
    return result


# ---------------------------------------------------------------------------------------------------
# Report


def ratio(a, b):
    return "n/a" if not b else "%.2f" % (a / b)


def targets(r, paper):
    """The targets this row misses, or "met" (rows other than the paper's method)."""
    missed = []
    if r["suppressed"] > TARGET_SUPPRESSED * paper["suppressed"]:
        missed.append("suppressed > %.2f x" % TARGET_SUPPRESSED)
    if "mean_point" not in r or r["mean_point"] > TARGET_COMPACTNESS * paper.get("mean_point", 0) * (1 + 1e-9):
        missed.append("mean-point compactness > %.1f x" % TARGET_COMPACTNESS)
    if r["pieces"]:
        missed.append("pieces")
    if r["releasing_nothing"] > paper["releasing_nothing"]:
        missed.append("more releasing nothing")
    if r["aggregates"] != paper["aggregates"]:
        missed.append("%d aggregates, not the paper's %d" % (r["aggregates"], paper["aggregates"]))
    if (r["plugin"].get("RUNTIME") or r["wall"]) > TARGET_SECONDS:
        missed.append("> %.0f s" % TARGET_SECONDS)
    return "met" if not missed else "missed: " + ", ".join(missed)


def table(results, meta):
    out = ["| QIs | configuration | aggregates | suppressed | % | x paper | smallest EC | compactness (km) | x paper "
           "| mean-point | x paper | NUE (bits) | x paper | in pieces | releasing nothing | RUNTIME (s) | wall (s) | targets |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    notes = []
    for label, _ in QI_SETS:
        rows = [r for r in results if r["qis"] == label]
        paper = next((r for r in rows if r["row"] == ROWS[0][0] and not r["error"]), None)
        for r in rows:
            if r["error"]:
                out.append("| %s | %s | %s | | | | | | | | | | | | | | | |" % (label, r["row"], r["error"].replace("|", "/")))
                continue
            base = paper or {"suppressed": None, "compactness": None, "mean_point": None, "nue": None}
            out.append("| %s | %s | %s | %s | %.2f | %s | %d%s | %s | %s | %s | %s | %s | %s | %d | %d | %.1f | %.1f | %s |" % (
                label, r["row"], pc.fmt(r["aggregates"]), pc.fmt(r["suppressed"]), r["suppressed_pct"],
                ratio(r["suppressed"], base["suppressed"]), r["smallest_ec"],
                "" if r["smallest_ec"] >= meta["k"] else " (not k-anonymous)", pc.fmt(r["compactness"] / 1000.0),
                ratio(r["compactness"], base["compactness"]), pc.fmt(r["mean_point"] / 1e6) if "mean_point" in r else "n/a",
                ratio(r["mean_point"], base.get("mean_point")) if "mean_point" in r else "n/a",
                pc.fmt(r["nue"]), ratio(r["nue"], base["nue"]),
                r["pieces"], r["releasing_nothing"], r["plugin"].get("RUNTIME") or 0, r["wall"],
                "(the paper's method)" if r is paper else targets(r, paper) if paper else "n/a (no paper row)"))
            notes += check_notes(label, r)
    return out, notes


def check_notes(label, r):
    """Where the recount disagrees with the plugin or the outputs do not fit together."""
    p, notes = r["plugin"], []
    if not r["release_matches_recount"]:
        notes.append("the release is not exactly the classes of k or more recounted through LOOKUP")
    if p.get("SUPPRESSED") is not None and p["SUPPRESSED"] != r["suppressed"]:
        notes.append("plugin SUPPRESSED %s, recount %d" % (pc.fmt(p["SUPPRESSED"]), r["suppressed"]))
    if p.get("COMPACTNESS") and abs(p["COMPACTNESS"] - r["compactness"]) > 1e-6 * p["COMPACTNESS"]:
        notes.append("plugin COMPACTNESS %.0f m, recount %.0f m" % (p["COMPACTNESS"], r["compactness"]))
    if p.get("MEAN_POINT_COMPACTNESS") and abs(p["MEAN_POINT_COMPACTNESS"] - r["mean_point"]) > 1e-6 * p["MEAN_POINT_COMPACTNESS"]:
        notes.append("plugin MEAN_POINT_COMPACTNESS %.0f, recount %.0f" % (p["MEAN_POINT_COMPACTNESS"], r["mean_point"]))
    if p.get("NUE") is not None and abs(p["NUE"] - r["nue"]) > 1e-6 * max(1.0, p["NUE"]):
        notes.append("plugin NUE %.1f, recount %.1f" % (p["NUE"], r["nue"]))
    if p.get("AGGREGATES") is not None and p["AGGREGATES"] != r["aggregates"]:
        notes.append("plugin AGGREGATES %s, LOOKUP %d" % (pc.fmt(p["AGGREGATES"]), r["aggregates"]))
    for key, what in (("regions_missing_from_lookup", "regions missing from LOOKUP"),
                      ("sites_missing", "regions whose site is not in SITE_POINTS"),
                      ("aggregates_with_several_sites", "aggregates with several site_id")):
        if r[key]:
            notes.append("%d %s" % (r[key], what))
    return ["%s / %s: %s." % (label, r["row"], "; ".join(notes))] if notes else []


def inputs_sentence(meta):
    i, rpc = meta["inputs"], meta["inputs"]["records_per_county"]
    generator = GEOGRAPHIES[meta.get("geography", "generated")]
    options = " ".join("--%s %s" % (k.replace("_", "-"), v) for k, v in i["parameters"].items() if k != "format")
    if "islands" in i:
        kind = "%s regions (%d single islands, %d in an archipelago)" % (pc.fmt(i["regions"]), i["islands"], i["archipelago"])
    else:
        kind = "%s real US counties (%d in several pieces; %d states, each its own QI factor), generated records" % (
            pc.fmt(i["regions"]), i["in_pieces"], i["states"])
    return ("Inputs (`bench/%s %s`): %s, %s records, %s-%s records per region (5th-95th percentile %s-%s, median %s), "
            "QIs %s. %d shared borders, %d island bridges." % (
                generator, options, kind, pc.fmt(i["records"]), pc.fmt(rpc["min"]), pc.fmt(rpc["max"]),
                pc.fmt(rpc["p5"]), pc.fmt(rpc["p95"]), pc.fmt(rpc["median"]),
                ", ".join("%s (%d)" % (q, len(v)) for q, v in i["qi_categories"].items()),
                meta["borders"], meta["bridges"]))


def merge_rerun(saved, rerun):
    """The rows of saved with those run again in rerun put in their place (same QIs and configuration)."""
    again = {(r["qis"], r["row"]): r for r in rerun["results"]}
    unknown = set(again) - {(r["qis"], r["row"]) for r in saved["results"]}
    if unknown:
        sys.exit("rows run again that the first run does not have: %s" % sorted(unknown))
    m = rerun["meta"]
    note = "%s (`%s`, started %s UTC, load %s to %s; plugin %s)." % (
        "; ".join("%s / %s" % key for key in again), shlex.join(m["argv"]), m["started"], m["load_start"],
        m["load_end"], m["plugin"])
    meta = dict(saved["meta"], reruns=saved["meta"].get("reruns", []) + [note])
    return {"meta": meta, "results": [again.get((r["qis"], r["row"]), r) for r in saved["results"]]}


def report(results, meta):
    i = meta["inputs"]
    lines = ["# Suppression at the same aggregate count: balanced density, ADC and the optimiser", "",
             "Command: `/usr/bin/python3 bench/search_comparison.py %s`" % shlex.join(meta["argv"]), "",
             "Machine: %s; started %s UTC; %d runs, one at a time, in %.1f min; load average (1 min) %s at the "
             "start, %s at the end (the machine is shared: times are noisy)." % (
                 meta["host"], meta["started"], len(results), meta["elapsed"] / 60.0, meta["load_start"],
                 meta["load_end"]), "",
             "Plugin under test: %s." % meta["plugin"], ""] + [
             "Rows run again: %s" % rerun for rerun in meta.get("reruns", [])] + [""] * bool(meta.get("reruns")) + [
             inputs_sentence(meta), "",
             "Every row: MODEL=3 FIXED_SITES=%d, K=%d, SEED=%d. *aggregates*: non-empty aggregates in LOOKUP; *x paper*: "
             "the ratio to the plain balanced-density row of the same QIs; compactness eq. 20 from the regions' "
             "centroids to SITE_POINTS; mean-point: the mean-point compactness (records x km, in millions), each "
             "region's records times its distance to its aggregate's records-weighted mean point, the same rule "
             "for every row whatever its sites; NUE eq. 22-23 over the released records; *in pieces*: aggregates whose regions "
             "are not connected by shared borders (islands bridged); *releasing nothing*: aggregates with no released "
             "record; RUNTIME: the plugin's own output; wall: the qgis_process call. Everything but RUNTIME is "
             "recounted from the written outputs. Targets: suppressed at most %.2f x the paper's method, "
             "mean-point compactness at most %.1f x, no aggregate in pieces, no more aggregates releasing nothing, as many aggregates as the "
             "paper's method returns (%d sites asked), RUNTIME within %.0f s." % (
                 meta["sites"], meta["k"], meta["run_seed"], TARGET_SUPPRESSED, TARGET_COMPACTNESS,
                 min(meta["sites"], i["regions"]), TARGET_SECONDS), ""]
    rows, notes = table([r for r in results if not r.get("not_available")], meta)
    lines += rows + [""]
    skipped = [r for r in results if r.get("not_available")]
    if skipped:
        lines += ["Not available in the plugin under test: %s." % "; ".join(
            "%s / %s (unknown %s)" % (r["qis"], r["row"], ", ".join(r["not_available"])) for r in skipped), ""]
    searched = [r for r in results if r.get("search_log")]
    if searched:
        lines += ["The search's own log line (trial moves, and the cost of each kind of move):", ""]
        lines += ["- %s: %s" % (r["qis"], r["search_log"][0]) for r in searched] + [""]
    if notes:
        lines += ["Checks that failed:", ""] + ["- " + n for n in notes] + [""]
    else:
        lines += ["Every run's release holds exactly the classes of k or more records recounted through LOOKUP, "
                  "and the plugin's SUPPRESSED, COMPACTNESS, MEAN_POINT_COMPACTNESS (where returned), NUE and AGGREGATES "
                  "equal the recount.", ""]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="/tmp/search-comparison.md", help="Markdown table (default %(default)s)")
    parser.add_argument("--json-out", default=None, help="also write the raw results as JSON here")
    parser.add_argument("--from-json", default=None, help="run nothing: rebuild the table from a --json-out file")
    parser.add_argument("--geography", choices=sorted(GEOGRAPHIES), default="generated",
                        help="generated counties (make_counties.py) or the real US counties with generated records "
                             "(make_us_counties.py, needs r-cran-maps); default %(default)s")
    parser.add_argument("--data", default=None, help="inputs folder (default /tmp/vbas-counties or /tmp/vbas-us-counties)")
    parser.add_argument("--seed", type=int, default=20261126, help="the input generator's --seed")
    parser.add_argument("--records", type=int, default=None, help="the input generator's --records (default its own)")
    parser.add_argument("--sites", type=int, default=0, help="FIXED_SITES of every row (default: regions / 3.3)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--run-seed", type=int, default=1, help="SEED of every run")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds before a run is stopped and recorded")
    parser.add_argument("--only", action="append", default=[], help="run only rows whose label contains this")
    parser.add_argument("--rerun-json", default=None,
                        help="with --from-json: a later --json-out (of an --only run) whose rows replace those of the same "
                             "QIs and configuration; its command, time, load and plugin are noted; --json-out keeps the result")
    parser.add_argument("--plugin", default=os.path.join(pc.ROOT, "build", "qgis-profile", "profiles", "default",
                                                         "python", "plugins", "vbas"), help="installed plugin folder")
    args = parser.parse_args()

    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        if args.rerun_json:
            with open(args.rerun_json) as f:
                saved = merge_rerun(saved, json.load(f))
            if args.json_out:
                with open(args.json_out, "w") as f:
                    json.dump(saved, f, indent=1)
        text = report(saved["results"], saved["meta"])
        print(text)
        with open(args.out, "w") as f:
            f.write(text)
        return 0
    for f in (pc.QGIS_PROCESS, pc.plugin_library(args.plugin)):
        if not os.path.exists(f):
            sys.exit("missing %s (build and install first: bash .ci/setup)" % f)

    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    load_start, t0 = pc.load1(), time.monotonic()
    args.data = args.data or DEFAULT_DATA[args.geography]
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), GEOGRAPHIES[args.geography]),
                    "--out", args.data, "--seed", str(args.seed)] + (["--records", str(args.records)] if args.records else []),
                   check=True)
    with open(os.path.join(args.data, "counties.json")) as f:
        counties = json.load(f)
    args.sites = args.sites or round(counties["regions"] / 3.3)
    inputs = load_inputs(args.data)
    work = tempfile.mkdtemp(prefix="vbas-search-comparison-")
    results = []
    try:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=pc.make_profile(work, args.plugin))
        plugin = pc.plugin_description(os.path.join(env["QGIS_CUSTOM_CONFIG_PATH"], "profiles", "default", "python",
                                                    "plugins", "vbas"))
        known = known_parameters(env)
        log("%s; %d sites; host %s; load %s" % (plugin, args.sites, pc.host_description(), load_start))
        for label, qis in QI_SETS:
            for row, params in ROWS:
                if args.only and not any(o in row for o in args.only):
                    continue
                unknown = sorted(set(params) - known)
                if unknown:
                    log("%s / %s: not available (unknown %s)" % (label, row, ", ".join(unknown)))
                    results.append({"qis": label, "row": row, "parameters": params, "not_available": unknown})
                    continue
                results.append(run_row(inputs, args.data, label, qis, row, params, args, env, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = {"argv": sys.argv[1:], "geography": args.geography, "host": pc.host_description(), "started": started,
            "elapsed": time.monotonic() - t0, "load_start": load_start, "load_end": pc.load1(), "k": args.k,
            "sites": args.sites, "run_seed": args.run_seed, "plugin": plugin, "inputs": counties,
            "borders": len(inputs["links"]) - inputs["bridges"], "bridges": inputs["bridges"]}
    pc.write_report(report(results, meta), args.out, args.json_out, {"meta": meta, "results": results})
    log("done in %.1f min; table in %s" % (meta["elapsed"] / 60.0, args.out))
    return 1 if any(r.get("error") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
