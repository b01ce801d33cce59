#!/usr/bin/python3
"""A release at a stated journalist risk (k-map) against k-anonymity, at national scale.

Run from the repository root, after the build (`bash .ci/setup`), with /usr/bin/python3 (osgeo, numpy):

    /usr/bin/python3 bench/kmap_comparison.py --out /tmp/kmap-comparison.md --json-out /tmp/kmap-comparison.json

Inputs: bench/make_counties.py's generated counties (about 3,000) with --records records drawn from a
generated population at --sampling-fraction (each county's residents spread over its QI classes, each
resident a record with that chance), and the census tables the generator writes (population3.csv,
population4.csv); generated into --data on the first run and then kept.

For the 3-QI and the 4-QI selection, every row runs vbas:anonymize headless at the same number of
aggregates (MODEL=3, FIXED_SITES = the regions / 3.3), balanced density, SEED 1:
  k-anonymity at k = 11 (the prosecutor's k, RISK_MODEL=0);
  k-map at k = 11 (RISK_MODEL=1, the population table), and at k = 12, the smallest k whose journalist
  risk 1/k meets a stated 0.09 (docs/method.md, "A release at a stated risk");
  k-anonymity and k-map at k = 12 with generalization (GENERALIZE: every QI its value or "*", local
  suppression, the default SUPPRESSION_LIMIT of 5 %).

Every row is recounted from its written outputs (ANONYMIZED, LOOKUP) with the input records and the
census table, by code that shares nothing with the plugin: the classes (aggregate, QI values) of the input
records through LOOKUP, each with its records f and residents F; the release must hold exactly the classes
with f >= k (k-anonymity) or F >= k (k-map), whole. A generalized release's classes as written (a value or
"*") must each hold k records (k-anonymity) or k residents (k-map), the residents of a "*" those of every
value of its QI in the class's aggregate. Then: suppressed records, aggregates, the smallest
released f and F (prosecutor max risk 1/min f, journalist max risk 1/min F), the plugin's generic NUE
over the QIs and the geography together (LOSS_GENERIC_NUE: a value generalized or written "*" loses bits
too) and RUNTIME, and the wall time of the qgis_process call. The ratios are to the
k-anonymity row of the same QIs, run in the same session.
"""

import argparse
import collections
import datetime
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_counties as mc  # noqa: E402  (the QIs of the inputs)
import paper_comparison as pc  # noqa: E402  (profile snapshot, error lines, machine description)

GENERALIZED = {"GENERALIZE": "true", "LOCAL_SUPPRESSION": "true"}
ROWS = [
    ("k-anonymity, k = 11", {"RISK_MODEL": 0, "K": 11}),
    ("k-map, k = 11", {"RISK_MODEL": 1, "K": 11}),
    ("k-map, k = 12 (journalist risk at most 0.09)", {"RISK_MODEL": 1, "K": 12}),
    ("k-anonymity, k = 12, generalized", dict(GENERALIZED, RISK_MODEL=0, K=12)),
    ("k-map, k = 12, generalized", dict(GENERALIZED, RISK_MODEL=1, K=12)),
]
QI_SETS = [("3 QIs", mc.QI_FIELDS[:3], "population3.csv"), ("4 QIs", mc.QI_FIELDS, "population4.csv")]


def log(msg):
    print("[kmap_comparison %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def read_cells(data, qis, table):
    """Per (region, QI values): the input records, and the census table's residents."""
    records = collections.Counter()
    with sqlite3.connect("file:%s?mode=ro" % os.path.join(data, "records.gpkg"), uri=True) as db:
        columns = ", ".join('"%s"' % q for q in ["region_id"] + list(qis))
        for row in db.execute('SELECT %s, COUNT(*) FROM records GROUP BY %s' % (columns, columns)):
            records[tuple(row[:-1])] += row[-1]
    residents = {}
    with open(os.path.join(data, table)) as f:
        header = f.readline().strip().split(",")
        assert header == ["region_id"] + list(qis) + ["n"], header
        for line in f:
            *cell, n = line.strip().split(",")
            residents[tuple(cell)] = int(n)
    return records, residents


def written_classes(run_dir):
    """The release's classes as written, (aggregate_id, QI values): records."""
    written = collections.Counter()
    with sqlite3.connect("file:%s?mode=ro" % os.path.join(run_dir, "anonymized.gpkg"), uri=True) as db:
        names = [r[1] for r in db.execute("PRAGMA table_info(anonymized)")]
        qis = [n for n in names if n not in ("fid", "aggregate_id")]
        columns = ", ".join('"%s"' % q for q in ["aggregate_id"] + qis)
        for row in db.execute("SELECT %s, COUNT(*) FROM anonymized GROUP BY %s" % (columns, columns)):
            written[tuple(row[:-1])] += row[-1]
    return written


def starred_residents(F, written):
    """The residents of each written class, a "*" standing for every value of its QI in the aggregate."""
    by_mask = {}
    for cls in written:
        mask = tuple(v == "*" for v in cls[1:])
        if mask not in by_mask:
            by_mask[mask] = collections.Counter()
            for cell, n in F.items():
                by_mask[mask][(cell[0],) + tuple("*" if s else v for s, v in zip(mask, cell[1:]))] += n
    return {cls: by_mask[tuple(v == "*" for v in cls[1:])][cls] for cls in written}


def recount(cells, run_dir, k, kmap, generalized):
    """The release recounted against the classes of the input through LOOKUP (see the module's text)."""
    records, residents = cells
    with sqlite3.connect("file:%s?mode=ro" % os.path.join(run_dir, "lookup.gpkg"), uri=True) as db:
        unit = dict(db.execute("SELECT region_id, aggregate_id FROM lookup"))
    f, F = collections.Counter(), collections.Counter()
    for cell, n in records.items():
        f[(unit[cell[0]],) + cell[1:]] += n
    for cell, n in residents.items():
        F[(unit[cell[0]],) + cell[1:]] += n
    written = written_classes(run_dir)
    if generalized:
        sizes = starred_residents(F, written)
        kept, exact = written, all((sizes[c] if kmap else n) >= k for c, n in written.items())
    else:
        kept = {c: n for c, n in f.items() if (F[c] if kmap else n) >= k}
        sizes, exact = F, dict(written) == kept
    total = sum(records.values())
    released = sum(written.values())
    return {"exact": exact, "records": total, "suppressed": total - released,
            "suppressed_pct": 100.0 * (total - released) / total, "aggregates": len(set(unit.values())),
            "smallest_f": min(kept.values()) if kept else None,
            "smallest_F": min(sizes[c] for c in kept) if kept else None,
            "starred": sum(n for c, n in written.items() if "*" in c[1:])}


def run_row(cells, data, label, qis, table, row, params, args, env, work):
    run_dir = tempfile.mkdtemp(prefix="run-", dir=work)
    cmd = [pc.QGIS_PROCESS, "--json", "run", "vbas:anonymize", "--",
           "REGIONS=%s|layername=regions" % os.path.join(data, "regions.gpkg"), "REGION_ID=region_id",
           "RECORDS=%s|layername=records" % os.path.join(data, "records.gpkg"), "RECORD_REGION=region_id"]
    cmd += ["QI_FIELDS=%s" % q for q in qis]
    common = {"MODEL": 3, "FIXED_SITES": args.sites, "SEED": 1}
    cmd += ["%s=%s" % kv for kv in list(common.items()) + list(params.items())]
    generalized = "GENERALIZE" in params
    if params["RISK_MODEL"] == 1:
        cmd += ["POPULATION_TABLE=%s" % os.path.join(data, table), "POPULATION_REGION=region_id", "POPULATION_COUNT=n"]
    cmd += ["ANONYMIZED=%s" % os.path.join(run_dir, "anonymized.gpkg"), "LOOKUP=%s" % os.path.join(run_dir, "lookup.gpkg")]
    result = {"qis": label, "row": row, "parameters": dict(common, **params)}
    try:
        document, result["error"], result["wall"] = pc.run_json(cmd, env, args.timeout)
        if document:
            outputs = document["results"]
            result["plugin"] = {key: outputs.get(key) for key in ("RUNTIME", "LOSS_GENERIC_NUE", "SUPPRESSED", "JOURNALIST_MAX_RISK", "MAX_RISK")}
            result.update(recount(cells, run_dir, params["K"], params["RISK_MODEL"] == 1, generalized))
            if not result["exact"]:
                result["error"] = ("a written class is below k" if generalized else "the release does not hold exactly the classes its model keeps")
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    if result["error"]:
        log("%s / %s: FAILED %s" % (label, row, result["error"]))
    else:
        log("%s / %-45s suppressed %8d (%.2f%%)  min f %s  min F %s  RUNTIME %.1f s  wall %.1f s" % (
            label, row, result["suppressed"], result["suppressed_pct"], result["smallest_f"], result["smallest_F"],
            result["plugin"]["RUNTIME"] or 0, result["wall"]))
    return result


def ratio(a, b):
    return "n/a" if not b else "%.2f" % (a / b)


def report(results, meta):
    lines = ["# k-map against k-anonymity (%s)" % meta["started"], "",
             "Command: `/usr/bin/python3 bench/kmap_comparison.py %s`" % " ".join(meta["argv"]), "",
             "Machine: %s; load average %s at the start, %s at the end; %.1f min in all. Plugin: %s." % (
                 meta["host"], meta["load_start"], meta["load_end"], meta["elapsed"] / 60.0, meta["plugin"]), "",
             "Inputs: %d generated counties, %d records drawn from %d residents (sampling fraction %s), %d aggregates "
             "(MODEL=3 FIXED_SITES), balanced density, SEED 1." % (
                 meta["inputs"]["regions"], meta["inputs"]["records"], meta["residents"], meta["fraction"], meta["sites"]), "",
             "| QIs | release | aggregates | suppressed | × k-anonymity | records with a * | smallest class (records) | smallest class (residents) "
             "| prosecutor max risk | journalist max risk | bits lost (QIs and geography) | RUNTIME (s) | × k-anonymity | wall (s) | recount |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    base = {}
    for r in results:
        if r.get("error"):
            lines.append("| %s | %s | | | | | | | | | | | | | FAILED: %s |" % (r["qis"], r["row"], r["error"]))
            continue
        b = base.setdefault(r["qis"], r)
        p = r["plugin"]
        lines.append("| %s | %s | %d | %d (%.2f %%) | %s | %d | %s | %s | %s | %s | %s | %.1f | %s | %.1f | %s |" % (
            r["qis"], r["row"], r["aggregates"], r["suppressed"], r["suppressed_pct"], ratio(r["suppressed"], b["suppressed"]), r["starred"],
            r["smallest_f"], r["smallest_F"], "%.3f" % (1.0 / r["smallest_f"]) if r["smallest_f"] else "",
            "%.4f" % (1.0 / r["smallest_F"]) if r["smallest_F"] else "", "%.4g" % p["LOSS_GENERIC_NUE"] if p.get("LOSS_GENERIC_NUE") is not None else "n/a",
            p["RUNTIME"] or 0, ratio(p["RUNTIME"] or 0, b["plugin"]["RUNTIME"]), r["wall"],
            "every class meets k" if "GENERALIZE" in r["parameters"] else "exact"))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="/tmp/kmap-comparison.md")
    parser.add_argument("--json-out", default=None)
    parser.add_argument("--data", default="/tmp/vbas-counties-kmap")
    parser.add_argument("--records", type=int, default=3_000_000)
    parser.add_argument("--sampling-fraction", type=float, default=0.01)
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--plugin", default=os.path.join(pc.ROOT, "build", "qgis-profile", "profiles", "default",
                                                         "python", "plugins", "vbas"), help="installed plugin folder")
    args = parser.parse_args()
    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    load_start, t0 = pc.load1(), time.monotonic()
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_counties.py"), "--out", args.data,
                    "--records", str(args.records), "--sampling-fraction", str(args.sampling_fraction)], check=True)
    with open(os.path.join(args.data, "counties.json")) as f:
        counties = json.load(f)
    args.sites = round(counties["regions"] / 3.3)
    work = tempfile.mkdtemp(prefix="vbas-kmap-comparison-")
    results, residents = [], 0
    try:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=pc.make_profile(work, args.plugin))
        plugin = pc.plugin_description(os.path.join(env["QGIS_CUSTOM_CONFIG_PATH"], "profiles", "default", "python", "plugins", "vbas"))
        log("%s; %d sites; host %s; load %s" % (plugin, args.sites, pc.host_description(), load_start))
        for label, qis, table in QI_SETS:
            cells = read_cells(args.data, qis, table)
            residents = sum(cells[1].values())
            for row, params in ROWS:
                results.append(run_row(cells, args.data, label, qis, table, row, params, args, env, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = {"argv": sys.argv[1:], "host": pc.host_description(), "started": started, "elapsed": time.monotonic() - t0,
            "load_start": load_start, "load_end": pc.load1(), "sites": args.sites, "plugin": plugin, "inputs": counties,
            "residents": residents, "fraction": args.sampling_fraction}
    pc.write_report(report(results, meta), args.out, args.json_out, {"meta": meta, "results": results})
    log("done in %.1f min; table in %s" % (meta["elapsed"] / 60.0, args.out))
    return 1 if any(r.get("error") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
