#!/usr/bin/python3
"""Reproduce the VBAS paper's comparison (Croft, Shi, Sack, Corriveau, sec. 4-5) on synthetic data.

Run from the repository root, after the build (`bash .ci/setup`), with /usr/bin/python3 (osgeo, numpy,
scipy):

    /usr/bin/python3 bench/paper_comparison.py --out /tmp/paper-comparison.md

It takes 12-13 minutes (11.6 and 13.1 min measured, 2026-11-22, AMD EPYC, `nproc` 2, shared with
builds: load average 2.5-6.7) on a 2-core machine (two qgis_process runs at a time, `--jobs 2`), of which
10 s generate the inputs; the slowest run is ADC with the fewest-suppressed objective on west Q6 with
entropy (2.5-4 min).
`--json-out FILE` also saves the raw results, and `--from-json FILE` rebuilds the report from them
without running anything; `--only 'west:Q1,Q6;east'` restricts the scenarios (for testing).

What it generates (deterministic: the same --seed gives the same files, cached under --data, default
/tmp/vbas-paper-comparison; delete that folder or pass --force to regenerate):
  Two study areas, "west" and "east", standing in for the paper's Western and Eastern Canada testing
  sets. Each is a 200 km x 150 km rectangle tessellated into clustered Voronoi polygons (the
  dissemination-area analogue, generated with bench/make_inputs.py's functions):
    west: 1,800 regions, 100-180 records per region (uniform), 250,244 records;
    east: 1,500 regions, 80-160 records per region (uniform), 179,695 records.
  The paper fills each dissemination area with 400-700 records; we use fewer so that the 72 runs
  (of which 48 run ADC) finish in about 12 minutes on 2 cores (a trial with 150-300 records per region,
  400,000 records in west, took 20-30 s per balanced-density run instead of 5-15 s: reading and writing
  the records dominates). The number of sites (records / cutoff) does not
  depend on how the records are spread over the regions, so the aggregated regions still hold
  thousands of records each, as in the paper; only the number of initial regions per aggregate is
  larger than it would be with 400-700 records per region.
  Like the paper's NHS-derived data, every record draws each attribute independently from the
  distribution of its province: each study area is cut into three provinces (bands of x), whose
  marginals are drawn (Dirichlet, concentration 300) around the study area's own marginals. West and
  east have different marginals (east is older, less diverse, more often married/widowed and more
  often publicly insured) and different records per region.
  Attributes (the paper draws its QIs from the 2011 NHS public-use microdata file but does not name
  them; these are synthetic analogues, the same fields as bench/make_inputs.py):
    age_group (9 ten-year groups), sex (2), race (5, the NHS visible-minority analogue),
    insurance (4, analogue of a coverage/income-type attribute), marital (5), and diagnosis (20, the
    sensitive attribute, never a QI).
  Six QI selections (the paper uses six, unnamed; ours grow from 18 to 1,800 combinations so that the
  entropy and MaxCombs models diverge as they do in the paper):
    Q1 age_group, sex                                   (MaxCombs 18)
    Q2 age_group, sex, marital                          (90)
    Q3 age_group, sex, race                             (90)
    Q4 age_group, sex, insurance, marital               (360)
    Q5 age_group, sex, race, insurance                  (360)
    Q6 age_group, sex, race, insurance, marital         (1,800)

What it runs: 12 scenarios (2 study areas x 6 QI selections) x 6 configurations = 72 runs of
vbas:anonymize through headless QGIS (`qgis_process.bin --json run`), on a snapshot of the plugin
installed in build/qgis-profile (copied into a temporary profile, so a rebuild meanwhile does not
change the binary under test):
    site count MODEL=0 (entropy) and MODEL=1 (MaxCombs), each with
    METHOD=0 (balanced density), METHOD=1 OBJECTIVE=0 (ADC, the paper's eq. 14) and
    METHOD=1 OBJECTIVE=1 (ADC, fewest suppressed records);
    K=5, COEFFICIENTS=0 (Western Canada) for west and 2 (Eastern Canada) for east, SEED fixed.
Every output is written as a GeoPackage into a temporary folder and deleted after the run.
A run that fails (non-zero exit or timeout) is recorded with its error line and the rest carry on.

What it prints (and writes to --out): a Markdown table, one row per scenario x configuration (SITES,
SUPPRESSED, SUPPRESSED_PERCENT, COMPACTNESS, DISCERNIBILITY, NUE, RUNTIME, ADC_MOVES_TRIED,
ADC_MOVES_COMMITTED, ADC_STOP, plus AGGREGATES), then a summary that computes the paper's ratios on our
data and says whether each finding agrees with the paper. Progress goes to stderr.

How the paper's ratios are averaged (the paper says only "averaged across the measured results"): for
each scenario, the entropy run is paired with the MaxCombs run of the same site location method. The
headline is the ratio of the sums over the 12 scenarios with balanced density (a pooled average, large
scenarios weigh more); the report also gives the mean of the per-scenario ratios (scenarios whose
denominator is 0 are left out) and both over all three site location methods (36 pairs). A finding
"agrees in direction" when the ratio of the sums is below 100% and more than half of the scenarios go
the paper's way; its magnitude is "close" when it is within a factor 1.5 of the paper's percentage.
ADC is compared with balanced density on the same scenario and site count model (24 pairs per objective).
"""

import argparse
import concurrent.futures
import datetime
import glob
import hashlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from osgeo import gdal, ogr

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_inputs as mk  # noqa: E402  (reused, not modified: geometry of the regions)

gdal.UseExceptions()
ogr.UseExceptions()
gdal.SetConfigOption("OGR_SQLITE_SYNCHRONOUS", "OFF")
gdal.SetConfigOption("OGR_SQLITE_JOURNAL", "OFF")
gdal.SetConfigOption("OGR_SQLITE_CACHE", "512")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QGIS_PROCESS = "/usr/bin/qgis_process.bin"
FORMAT_VERSION = 1  # bump when the generator changes, so cached inputs are regenerated

# Attribute categories (the same fields and values as bench/make_inputs.py).
CATEGORIES = {name: values for name, values, _ in mk.QIS}
DIAGNOSES = mk.DIAGNOSES

# The two study areas: the paper's Western and Eastern Canada testing sets. Unnormalized marginals;
# each of the three provinces of an area draws its own marginals around these.
AREAS = {
    "west": {
        "regions": 1800, "records": (100, 180), "coefficients": 0, "coefficients_name": "Western (1588, 0.42)",
        "marginals": {
            "age_group": [12, 12, 14, 15, 14, 13, 10, 6, 4],
            "sex": [50, 50],
            "race": [60, 25, 3, 7, 5],
            "insurance": [48, 36, 11, 5],
            "marital": [37, 42, 12, 6, 3],
        },
    },
    "east": {
        "regions": 1500, "records": (80, 160), "coefficients": 2, "coefficients_name": "Eastern (1978, 0.304)",
        "marginals": {
            "age_group": [9, 10, 11, 11, 13, 15, 14, 10, 7],
            "sex": [52, 48],
            "race": [90, 2, 3, 4, 1],
            "insurance": [66, 22, 8, 4],
            "marital": [31, 46, 9, 7, 7],
        },
    },
}
PROVINCES = 3
DIRICHLET_CONCENTRATION = 300.0

QI_SELECTIONS = [
    ("Q1", ["age_group", "sex"]),
    ("Q2", ["age_group", "sex", "marital"]),
    ("Q3", ["age_group", "sex", "race"]),
    ("Q4", ["age_group", "sex", "insurance", "marital"]),
    ("Q5", ["age_group", "sex", "race", "insurance"]),
    ("Q6", ["age_group", "sex", "race", "insurance", "marital"]),
]

# (label, MODEL, METHOD, OBJECTIVE or None)
CONFIGS = [
    ("entropy/BD", 0, 0, None),
    ("entropy/ADC-paper", 0, 1, 0),
    ("entropy/ADC-fewest", 0, 1, 1),
    ("MaxCombs/BD", 1, 0, None),
    ("MaxCombs/ADC-paper", 1, 1, 0),
    ("MaxCombs/ADC-fewest", 1, 1, 1),
]
METHOD_LABELS = {(0, None): "BD", (1, 0): "ADC-paper", (1, 1): "ADC-fewest"}

OUTPUT_KEYS = ["SITES", "SUPPRESSED", "SUPPRESSED_PERCENT", "COMPACTNESS", "DISCERNIBILITY", "NUE", "RUNTIME",
               "ADC_MOVES_TRIED", "ADC_MOVES_COMMITTED", "ADC_STOP", "RECORDS", "AGGREGATES", "ENTROPY", "MAXCOMBS",
               "CUTOFF", "ADC_ALPHA", "ADC_SUPPRESSED"]

_log_lock = threading.Lock()
_t_start = time.monotonic()


def log(msg):
    with _log_lock:
        print("[paper_comparison %s +%.0fs] %s" % (time.strftime("%H:%M:%S"), time.monotonic() - _t_start, msg),
              file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# Inputs


def write_records(path, ids, points, area, rng):
    """Records table: region_id, the five QIs and diagnosis; each record's attributes drawn
    independently from its province's marginals (provinces = PROVINCES bands of x); random row order."""
    lo, hi = area["records"]
    n = len(ids)
    per_region = rng.integers(lo, hi + 1, size=n)
    # Province of each region: bands of equal width in x.
    band = np.minimum(((points[:, 0] - mk.XMIN) / mk.WIDTH * PROVINCES).astype(int), PROVINCES - 1)
    province_marginals = []
    for _ in range(PROVINCES):
        m = {}
        for name, _ in CATEGORIES.items():
            base = np.asarray(area["marginals"][name], dtype=float)
            base = base / base.sum()
            m[name] = rng.dirichlet(base * DIRICHLET_CONCENTRATION)
        province_marginals.append(m)
    region = np.repeat(np.arange(n, dtype=np.int32), per_region)
    rng.shuffle(region)
    total = len(region)
    record_province = band[region]
    columns = []
    for name, values in CATEGORIES.items():
        codes = np.empty(total, dtype=np.int8)
        for p in range(PROVINCES):
            sel = record_province == p
            codes[sel] = rng.choice(len(values), size=int(sel.sum()), p=province_marginals[p][name])
        columns.append((np.asarray(values, dtype=object), codes))
    columns.append((np.asarray(DIAGNOSES, dtype=object), rng.integers(0, len(DIAGNOSES), size=total).astype(np.int8)))
    mk.write_records_table(path, np.asarray(ids, dtype=object), region, list(CATEGORIES) + ["diagnosis"], columns)
    return total, province_marginals


def make_area(name, area, data_dir, seed, force):
    """Regions and records of one study area, cached in data_dir/name (stamp file)."""
    out = os.path.join(data_dir, name)
    os.makedirs(out, exist_ok=True)
    regions_path = os.path.join(out, "regions.gpkg")
    records_path = os.path.join(out, "records.gpkg")
    stamp_path = os.path.join(out, "inputs.stamp")
    stamp = json.dumps({"area": area, "seed": seed, "provinces": PROVINCES, "dirichlet": DIRICHLET_CONCENTRATION,
                        "format": FORMAT_VERSION}, sort_keys=True) + "\n"
    if not force and all(os.path.exists(p) for p in (regions_path, records_path, stamp_path)):
        with open(stamp_path) as s:
            if s.read() == stamp:
                log("%s: inputs exist, kept (%s)" % (name, out))
                return out
    for p in (regions_path, records_path, stamp_path):
        if os.path.exists(p):
            os.remove(p)
    # One generator per area: its own geography and records; the area's name salts the seed.
    rng = np.random.default_rng([seed, sum(ord(c) for c in name)])
    ids = mk.region_ids(area["regions"])
    t0 = time.monotonic()
    points = mk.clustered_points(area["regions"], rng)
    mk.write_regions(regions_path, points, ids)
    total, _ = write_records(records_path, ids, points, area, rng)
    with open(stamp_path, "w") as s:
        s.write(stamp)
    log("%s: wrote %d regions and %d records in %.1f s to %s" % (name, area["regions"], total, time.monotonic() - t0, out))
    return out


# ---------------------------------------------------------------------------------------------------
# Runs


def make_profile(work, plugin_src):
    """A temporary QGIS profile with a snapshot of the installed plugin, enabled."""
    profile = os.path.join(work, "profile")
    plugins = os.path.join(profile, "profiles", "default", "python", "plugins")
    os.makedirs(plugins)
    shutil.copytree(plugin_src, os.path.join(plugins, "vbas"))
    ini_dir = os.path.join(profile, "profiles", "default", "QGIS")
    os.makedirs(ini_dir)
    with open(os.path.join(ini_dir, "QGIS3.ini"), "w") as f:
        f.write("[PythonPlugins]\nvbas=true\n")
    return profile


def error_line(stdout, stderr):
    """The most telling line of a failed run's output: the last error line with the indented lines that
    follow it (qgis_process prints "ERROR:<tab>An error was encountered ..." then the reason, indented)."""
    raw = [ln.rstrip() for ln in (stderr + "\n" + stdout).splitlines()]
    noise = ("QStandardPaths", "DeprecationWarning")
    raw = [ln for ln in raw if ln.strip() and not any(n in ln for n in noise)]
    for key in ("ERROR", "Error", "error", "failed", "Traceback"):
        hits = [i for i, ln in enumerate(raw) if key in ln]
        if hits:
            i = hits[-1]
            parts = [raw[i].strip()]
            for ln in raw[i + 1:i + 4]:
                if not ln[:1].isspace():
                    break
                parts.append(ln.strip())
            return " ".join(" ".join(parts).split())[:300]
    return (" ".join(raw[-1].split()) if raw else "no output")[:300]


def run_json(cmd, env, timeout):
    """A `qgis_process --json` run: its JSON document (None when it failed), the error line (None when it
    did not) and the wall time."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout after %d s" % timeout, time.monotonic() - t0
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        return None, "exit %d: %s" % (proc.returncode, error_line(proc.stdout, proc.stderr)), wall
    return json.loads(proc.stdout[proc.stdout.index("{"):]), None, wall


def run_one(job, env, work, timeout, max_iterations):
    area_name, area, area_dir, qsel, qis, (label, model, method, objective), seed, k = job
    run_dir = tempfile.mkdtemp(prefix="run-", dir=work)
    args = [QGIS_PROCESS, "--json", "run", "vbas:anonymize", "--",
            "REGIONS=%s|layername=regions" % os.path.join(area_dir, "regions.gpkg"), "REGION_ID=region_id",
            "RECORDS=%s|layername=records" % os.path.join(area_dir, "records.gpkg"), "RECORD_REGION=region_id"]
    args += ["QI_FIELDS=%s" % q for q in qis]
    args += ["MODEL=%d" % model, "COEFFICIENTS=%d" % area["coefficients"], "METHOD=%d" % method, "K=%d" % k,
             "SEED=%d" % seed]
    if objective is not None:
        args += ["OBJECTIVE=%d" % objective]
    if max_iterations:
        args += ["MAX_ITERATIONS=%d" % max_iterations]
    for out in ("SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI", "EVALUATION"):
        args.append("%s=%s" % (out, os.path.join(run_dir, out.lower() + ".gpkg")))
    row = {"area": area_name, "qsel": qsel, "qis": qis, "config": label, "model": model, "method": method,
           "objective": objective, "error": None}
    t0 = time.monotonic()
    try:
        proc = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
        row["wall"] = time.monotonic() - t0
        if proc.returncode != 0:
            row["error"] = "exit %d: %s" % (proc.returncode, error_line(proc.stdout, proc.stderr))
        else:
            try:
                doc = json.loads(proc.stdout[proc.stdout.index("{"):])
                results = doc["results"]
                for key in OUTPUT_KEYS:
                    row[key] = results.get(key)
                missing = [key for key in OUTPUT_KEYS[:10] if results.get(key) is None]
                if missing:
                    row["error"] = "missing outputs: " + ", ".join(missing)
            except (ValueError, KeyError) as e:
                row["error"] = "unreadable JSON (%s): %s" % (e, error_line(proc.stdout, proc.stderr))
    except subprocess.TimeoutExpired:
        row["wall"] = time.monotonic() - t0
        row["error"] = "timeout after %d s" % timeout
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    if row["error"]:
        log("%s %s %s: FAILED %s" % (area_name, qsel, label, row["error"]))
    else:
        log("%s %s %-19s sites %4d  suppressed %6d (%.3f%%)  runtime %6.1f s  ADC moves %s/%s %s" % (
            area_name, qsel, label, row["SITES"], row["SUPPRESSED"], row["SUPPRESSED_PERCENT"], row["RUNTIME"],
            row["ADC_MOVES_COMMITTED"], row["ADC_MOVES_TRIED"], row["ADC_STOP"]))
    return row


# ---------------------------------------------------------------------------------------------------
# Report


def fmt(v, digits=0):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if digits == 0:
        return "{:,.0f}".format(v)
    return "{:,.{d}f}".format(v, d=digits)


def pct(a, b):
    return None if not b else 100.0 * a / b


def fmt_pct(v):
    return "n/a" if v is None else "%.1f%%" % v


def full_table(rows):
    out = ["| area | QIs | MaxCombs of QIs | config | SITES | SUPPRESSED | SUPPRESSED_PERCENT | COMPACTNESS (km) | "
           "DISCERNIBILITY | NUE (bits) | AGGREGATES | RUNTIME (s) | ADC_MOVES_TRIED | ADC_MOVES_COMMITTED | ADC_STOP |",
           "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        qdesc = "%s (%s)" % (r["qsel"], ", ".join(r["qis"]))
        mc = fmt(r.get("MAXCOMBS") or math.prod(len(CATEGORIES[q]) for q in r["qis"]))
        if r["error"]:
            out.append("| %s | %s | %s | %s | error: %s | | | | | | | | | | |" % (
                r["area"], qdesc, mc, r["config"], r["error"].replace("|", "/")))
            continue
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["area"], qdesc, mc, r["config"], fmt(r["SITES"]), fmt(r["SUPPRESSED"]), fmt(r["SUPPRESSED_PERCENT"], 3),
            fmt(r["COMPACTNESS"] / 1000.0, 0), fmt(r["DISCERNIBILITY"]), fmt(r["NUE"]), fmt(r.get("AGGREGATES")),
            fmt(r["RUNTIME"], 1),
            fmt(r["ADC_MOVES_TRIED"]), fmt(r["ADC_MOVES_COMMITTED"]), r["ADC_STOP"]))
    return out


def ok(r):
    return r is not None and not r["error"]


def summarize(rows):
    """The paper's findings, computed on our runs. Returns (markdown lines, statements)."""
    by = {(r["area"], r["qsel"], r["model"], r["method"], r["objective"]): r for r in rows}
    scenarios = sorted({(r["area"], r["qsel"]) for r in rows}, key=lambda s: (s[0] != "west", s[1]))
    methods = [(0, None), (1, 0), (1, 1)]
    lines, statements = [], []

    # --- 5.1 entropy vs MaxCombs --------------------------------------------------------------------
    # Pairs (entropy run, MaxCombs run) of the same scenario and site location method.
    def pairs(method_list):
        out = []
        for s in scenarios:
            for m in method_list:
                e, c = by.get(s + (0,) + m), by.get(s + (1,) + m)
                if ok(e) and ok(c):
                    out.append((e, c))
        return out

    def ratios(pp, key, numerator_model):
        """(sum ratio %, mean of per-scenario ratios %, pairs used, pairs skipped for a zero denominator)."""
        num = [(c if numerator_model == 1 else e)[key] for e, c in pp]
        den = [(e if numerator_model == 1 else c)[key] for e, c in pp]
        per = [100.0 * a / b for a, b in zip(num, den) if b]
        return pct(sum(num), sum(den)), (statistics.mean(per) if per else None), len(per), len(pp) - len(per)

    bd = pairs([(0, None)])
    allm = pairs(methods)
    findings = [
        ("Suppression: MaxCombs as % of entropy", "SUPPRESSED", 1, 13.2),
        ("Compactness: entropy as % of MaxCombs", "COMPACTNESS", 0, 48.7),
        ("Discernibility: entropy as % of MaxCombs", "DISCERNIBILITY", 0, 35.8),
        ("NUE: entropy as % of MaxCombs", "NUE", 0, 64.2),
        ("Running time: entropy as % of MaxCombs", "RUNTIME", 0, None),
    ]
    lines += ["### Site count: entropy vs MaxCombs (paper sec. 5.1)", "",
              "Ratios over the %d scenarios with balanced density (BD, the paper's recommended method), and over all "
              "%d (scenario, site location method) pairs. *Sum* = ratio of the sums over the scenarios (each scenario "
              "weighted by its size, like a pooled average); *mean* = mean of the per-scenario ratios (scenarios "
              "with a zero denominator left out, count in brackets)." % (len(bd), len(allm)), "",
              "| finding | paper | ours, BD, sum | ours, BD, mean of ratios | ours, all methods, sum | "
              "ours, all methods, mean of ratios | scenarios (BD) in the paper's direction | agrees? |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    for title, key, nm, paper in findings:
        bs, bm, bn, bz = ratios(bd, key, nm)
        as_, am, an, az = ratios(allm, key, nm)
        # The paper's direction: the numerator is the smaller one (every listed ratio is below 100%).
        direction = sum(1 for e, c in bd if ((c if nm == 1 else e)[key] < (e if nm == 1 else c)[key]))
        ties = sum(1 for e, c in bd if c[key] == e[key])
        if paper is None:
            verdict = ("n/a" if bs is None else "agrees (no significant difference)" if 67 <= bs <= 150
                       else "disagrees (differs by more than 1.5x)")
            paper_s = "no significant difference"
        else:
            if bs is None:
                verdict = "n/a"
            elif bs < 100 and direction > len(bd) / 2:
                close = abs(math.log(bs / paper)) <= math.log(1.5) if bs > 0 else False
                verdict = "agrees in direction" + ("; magnitude close (within 1.5x)" if close else
                                                   "; magnitude differs (%.1f%% vs %.1f%%)" % (bs, paper))
            else:
                verdict = "disagrees"
            paper_s = "%.1f%%" % paper
        zb = " [%d zero]" % bz if bz else ""
        za = " [%d zero]" % az if az else ""
        lines.append("| %s | %s | %s | %s%s | %s | %s%s | %d of %d%s | %s |" % (
            title, paper_s, fmt_pct(bs), fmt_pct(bm), zb, fmt_pct(as_), fmt_pct(am), za, direction, len(bd),
            (" (%d tied)" % ties if ties else ""), verdict))
        statements.append("%s: paper %s, ours %s (BD, sum; mean of ratios %s) -> %s." % (
            title, paper_s, fmt_pct(bs), fmt_pct(bm), verdict))

    fewer = sum(1 for e, c in bd if c["SITES"] < e["SITES"])
    same = sum(1 for e, c in bd if c["SITES"] == e["SITES"])
    site_ratio = ratios(bd, "SITES", 1)
    verdict = "n/a" if not bd else "agrees" if fewer == len(bd) else (
        "mostly agrees" if fewer > len(bd) / 2 else "disagrees")
    lines += ["", "MaxCombs gives fewer sites than entropy in **%d of %d** scenarios%s (MaxCombs sites = %s of "
              "entropy's, sum over scenarios). Paper: MaxCombs *consistently* made lower approximations -> %s." % (
                  fewer, len(bd), (" (%d equal)" % same if same else ""), fmt_pct(site_ratio[0]), verdict), ""]
    statements.append("MaxCombs gives fewer sites in %d of %d scenarios (%s of entropy's sites) -> %s." % (
        fewer, len(bd), fmt_pct(site_ratio[0]), verdict))

    # More sites -> more suppression, more compact, lower information loss (within each scenario, BD).
    mono = {"SUPPRESSED": 0, "COMPACTNESS": 0, "DISCERNIBILITY": 0, "NUE": 0}
    for e, c in bd:
        many, few = (e, c) if e["SITES"] > c["SITES"] else (c, e)
        if many["SITES"] == few["SITES"]:
            continue
        mono["SUPPRESSED"] += many["SUPPRESSED"] > few["SUPPRESSED"]
        mono["COMPACTNESS"] += many["COMPACTNESS"] < few["COMPACTNESS"]
        mono["DISCERNIBILITY"] += many["DISCERNIBILITY"] < few["DISCERNIBILITY"]
        mono["NUE"] += many["NUE"] < few["NUE"]
    n_diff = sum(1 for e, c in bd if e["SITES"] != c["SITES"])
    sup_ties = sum(1 for e, c in bd if e["SITES"] != c["SITES"] and e["SUPPRESSED"] == c["SUPPRESSED"])
    ties_s = " (%d tied, both suppressing %s)" % (sup_ties, "nothing" if all(
        e["SUPPRESSED"] == 0 for e, c in bd if e["SUPPRESSED"] == c["SUPPRESSED"]) else "as many") if sup_ties else ""
    agree = "n/a" if not n_diff else "agrees" if all(
        mono[key] + (sup_ties if key == "SUPPRESSED" else 0) == n_diff for key in mono) else "partly disagrees"
    lines += ["Paper: *more sites -> more suppression, more compact regions, lower information loss*. Ours (BD, "
              "the configuration with more sites of each scenario's pair): more suppression in %d of %d%s, smaller "
              "compactness sum in %d, lower discernibility in %d, lower NUE in %d -> %s." % (
                  mono["SUPPRESSED"], n_diff, ties_s, mono["COMPACTNESS"], mono["DISCERNIBILITY"], mono["NUE"],
                  agree), ""]
    statements.append("More sites -> more suppression in %d/%d%s, more compact in %d/%d, lower discernibility in %d/%d, "
                      "lower NUE in %d/%d scenarios (BD) -> %s." % (
                          mono["SUPPRESSED"], n_diff, ties_s, mono["COMPACTNESS"], n_diff, mono["DISCERNIBILITY"],
                          n_diff, mono["NUE"], n_diff, agree))

    # --- 5.2 balanced density vs ADC ----------------------------------------------------------------
    lines += ["### Site location: balanced density vs ADC (paper sec. 5.2)", "",
              "Over the %d (scenario, site count model) pairs. Lower = ADC suppresses fewer records than balanced "
              "density (BD) on the same scenario and model. Time = ADC's RUNTIME / BD's RUNTIME (the plugin's own "
              "measure of the whole pipeline, reading included; noisy, see the load average above). Empty sites = "
              "runs whose sites ADC moved so that some Voronoi cells hold no region (AGGREGATES < SITES)." % (
                  2 * len(scenarios)), "",
              "| ADC objective | runs ok | lower suppression | equal | higher | suppressed records, ADC as % of BD "
              "(sum) | largest reduction | compactness ADC/BD (sum) | discernibility ADC/BD (sum) | NUE ADC/BD (sum) | "
              "time ADC/BD (median) | time ADC/BD (max) | total RUNTIME ADC / BD (s) | runs with empty sites | stops |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for obj, name in ((0, "paper (eq. 14, largest smallest EC)"), (1, "fewest suppressed records")):
        lower = equal = higher = empty = stuck = nothing = 0
        stuck_tried = []
        tot = {key: [0.0, 0.0] for key in ("SUPPRESSED", "COMPACTNESS", "DISCERNIBILITY", "NUE", "RUNTIME")}
        tr = []  # (time ratio, where)
        best = None  # (reduction %, where, BD suppressed, ADC suppressed)
        stops = {}
        n = 0
        for s in scenarios:
            for model in (0, 1):
                b, a = by.get(s + (model, 0, None)), by.get(s + (model, 1, obj))
                if not (ok(a) and ok(b)):
                    continue
                n += 1
                where = "%s %s %s" % (s[0], s[1], ("entropy", "MaxCombs")[model])
                lower += a["SUPPRESSED"] < b["SUPPRESSED"]
                equal += a["SUPPRESSED"] == b["SUPPRESSED"]
                higher += a["SUPPRESSED"] > b["SUPPRESSED"]
                empty += (a.get("AGGREGATES") or 0) < a["SITES"]
                for key in tot:
                    tot[key][0] += a[key]
                    tot[key][1] += b[key]
                if b["RUNTIME"]:
                    tr.append((a["RUNTIME"] / b["RUNTIME"], where))
                if a["SUPPRESSED"] < b["SUPPRESSED"]:  # the largest reduction in records
                    red = 100.0 * (b["SUPPRESSED"] - a["SUPPRESSED"]) / b["SUPPRESSED"]
                    if best is None or b["SUPPRESSED"] - a["SUPPRESSED"] > best[2] - best[3]:
                        best = (red, where, b["SUPPRESSED"], a["SUPPRESSED"])
                if a["ADC_STOP"] == "no improvement" and not a["ADC_MOVES_COMMITTED"]:
                    stuck += 1
                    stuck_tried.append(a["ADC_MOVES_TRIED"])
                nothing += b["SUPPRESSED"] == 0
                stops[a["ADC_STOP"]] = stops.get(a["ADC_STOP"], 0) + 1
        ratio = {key: pct(*v) for key, v in tot.items()}
        med = statistics.median(t for t, _ in tr) if tr else None
        slowest = max(tr) if tr else None
        best_s = ("%s: %d -> %d (-%.0f%%)" % (best[1], best[2], best[3], best[0])) if best else "none"
        lines.append("| %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %.0f / %.0f | %d | %s |" % (
            name, n, lower, equal, higher, fmt_pct(ratio["SUPPRESSED"]), best_s, fmt_pct(ratio["COMPACTNESS"]),
            fmt_pct(ratio["DISCERNIBILITY"]), fmt_pct(ratio["NUE"]), ("%.2fx" % med) if tr else "n/a",
            ("%.2fx (%s)" % slowest) if tr else "n/a", tot["RUNTIME"][0], tot["RUNTIME"][1], empty,
            "; ".join("%s: %d" % kv for kv in sorted(stops.items()))))
        # Paper: some scenarios improve significantly, others are quite similar; compactness and information loss
        # comparable; in certain cases (many records or classes) ADC much slower.
        if n == 0:
            verdict = "n/a (no run succeeded)"
        elif lower == 0:
            verdict = "disagrees: ADC never lowers suppression"
        elif lower == n:
            verdict = "agrees that ADC lowers suppression (here in every scenario; the paper saw it in some)"
        elif lower == n - nothing:
            verdict = "agrees that ADC lowers suppression: here in every scenario where BD suppresses anything (the " \
                      "other %d suppress nothing), largest reduction %s; the paper saw it in some" % (nothing, best_s)
        else:
            verdict = "agrees: ADC lowers suppression in some scenarios (largest reduction %s) and not in others" % best_s
        if higher:
            verdict += ", but it raises suppression in %d (the objective rewards the smallest class, not the " \
                       "suppressed records)" % higher
        if best and best[0] < 10 and lower:
            verdict += "; the improvements are small, not the paper's *significant* ones"
        if stuck:
            verdict += "; in %d runs it committed no move (it tried %s-%s, then stopped: no improvement), the " \
                       "paper's early convergence" % (stuck, fmt(min(stuck_tried)), fmt(max(stuck_tried)))
        comparable = all(r is not None and 80 <= r <= 125 for r in (ratio["COMPACTNESS"], ratio["NUE"]))
        verdict += ("" if n == 0 else "; compactness and NUE comparable to BD (agrees)" if comparable else
                    "; compactness %s and NUE %s of BD's: not comparable as in the paper (disagrees)" % (
                        fmt_pct(ratio["COMPACTNESS"]), fmt_pct(ratio["NUE"])))
        if not tr:
            slow = "time n/a"
        elif slowest[0] >= 2:
            slow = "agrees that ADC is much slower in certain cases (up to %.1fx BD's running time, in %s; median " \
                   "%.2fx)" % (slowest[0], slowest[1], med)
        else:
            slow = "disagrees on time: ADC is never much slower (median %.2fx, max %.2fx)" % (med, slowest[0])
        statements.append("ADC (%s): lower suppression than BD in %d of %d, equal in %d, higher in %d; suppressed "
                          "records %s of BD's -> %s; %s.%s" % (
                              name, lower, n, equal, higher, fmt_pct(ratio["SUPPRESSED"]), verdict, slow,
                              (" In %d of %d runs ADC left some sites with no region (AGGREGATES < SITES): those "
                               "releases have fewer, larger aggregates than the site count asked for." % (empty, n))
                              if empty else ""))
    lines.append("")
    return lines, statements


def report(rows, meta):
    lines = ["# VBAS: the paper's comparison on synthetic data", "",
             "Command: `/usr/bin/python3 bench/paper_comparison.py %s`" % " ".join(meta["argv"]), "",
             "Machine: %s; started %s; %d runs in %.1f min (%d at a time); load average (1 min) %s at the start, "
             "%s at the end (the machine is shared: RUNTIME is noisy)." % (
                 meta["host"], meta["started"], len(rows), meta["elapsed"] / 60.0, meta["jobs"], meta["load_start"],
                 meta["load_end"]), "",
             "Inputs: " + "; ".join("%s %d regions, %d-%d records/region, %s records, coefficients %s" % (
                 name, a["regions"], a["records"][0], a["records"][1], fmt(a.get("total_records")),
                 a["coefficients_name"]) for name, a in meta["areas"].items()) +
             ". k = %d, SEED = %d, ADC MAX_ITERATIONS %s." % (
                 meta["k"], meta["seed"], meta["max_iterations"] or "default"), ""]
    if meta.get("plugin"):
        lines += ["Plugin under test: %s." % meta["plugin"], ""]
    summary, statements = summarize(rows)
    lines += ["## Summary", ""] + summary
    lines += ["### Agreement with the paper", ""] + ["- " + s for s in statements] + [""]
    failed = [r for r in rows if r["error"]]
    if failed:
        lines += ["**%d runs failed**: %s" % (len(failed), "; ".join("%s %s %s: %s" % (
            r["area"], r["qsel"], r["config"], r["error"]) for r in failed)), ""]
    lines += ["## All runs", "",
              "BD = balanced density; ADC-paper = ADC with OBJECTIVE=0 (eq. 14); ADC-fewest = ADC with OBJECTIVE=1. "
              "COMPACTNESS is eq. 20 in km (EPSG:3857 metres / 1000), NUE in bits over the released records, "
              "RUNTIME the plugin's own measure of the whole pipeline.", ""]
    lines += full_table(rows)
    return "\n".join(lines) + "\n", statements


def plugin_library(folder):
    """The plugin's library in folder (libvbas-<QGIS version>.so), or a path that does not exist."""
    found = sorted(glob.glob(os.path.join(folder, "libvbas-*.so")))
    return found[-1] if found else os.path.join(folder, "libvbas-<QGIS version>.so")


def plugin_description(snapshot):
    """The snapshot of the plugin: version, the library's sha256 (first 16 hex digits) and build time."""
    lib = plugin_library(snapshot)
    with open(lib, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    version = "?"
    try:
        with open(os.path.join(snapshot, "metadata.txt")) as f:
            version = next((ln.split("=", 1)[1].strip() for ln in f if ln.startswith("version=")), "?")
    except OSError:
        pass
    mtime = datetime.datetime.fromtimestamp(os.path.getmtime(lib))  # copytree keeps the mtime
    return "vbas %s, %s sha256 %s..., built %s" % (version, os.path.basename(lib), digest, mtime.strftime("%Y-%m-%d %H:%M:%S"))


def write_report(text, out, json_out, document):
    """Prints the Markdown report and writes it to out, and the raw document as JSON to json_out if given."""
    print(text)
    with open(out, "w") as f:
        f.write(text)
    if json_out:
        with open(json_out, "w") as f:
            json.dump(document, f, indent=1)


def load1():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def host_description():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores (nproc), %s" % (cpu, os.cpu_count() or 0, platform.platform())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="/tmp/paper-comparison.md", help="Markdown report (default %(default)s)")
    parser.add_argument("--json-out", default=None, help="also write the raw rows as JSON here")
    parser.add_argument("--from-json", default=None,
                        help="run nothing: rebuild the report from a --json-out file of an earlier run")
    parser.add_argument("--data", default="/tmp/vbas-paper-comparison", help="input cache (default %(default)s)")
    parser.add_argument("--force", action="store_true", help="regenerate the inputs even if cached")
    parser.add_argument("--seed", type=int, default=20261121, help="input generator seed and SEED of every run")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2, choices=(1, 2), help="qgis_process runs at a time (max 2)")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds before a run is stopped and recorded")
    parser.add_argument("--max-iterations", type=int, default=0,
                        help="ADC MAX_ITERATIONS (0: the plugin's default)")
    parser.add_argument("--plugin", default=os.path.join(ROOT, "build", "qgis-profile", "profiles", "default", "python",
                                                         "plugins", "vbas"), help="installed plugin folder to snapshot")
    parser.add_argument("--only", default="", help="restrict, e.g. 'west:Q1,Q6' or 'east' (for testing)")
    args = parser.parse_args()
    args.argv = sys.argv[1:]

    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        text, _ = report(saved["rows"], saved["meta"])
        print(text)
        with open(args.out, "w") as f:
            f.write(text)
        return 0

    for f in (QGIS_PROCESS, plugin_library(args.plugin)):
        if not os.path.exists(f):
            sys.exit("missing %s (build and install first: bash .ci/setup)" % f)

    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    load_start = load1()
    t0 = time.monotonic()
    area_dirs = {}
    for name, area in AREAS.items():
        area_dirs[name] = make_area(name, area, args.data, args.seed, args.force)
        ds = ogr.Open(os.path.join(area_dirs[name], "records.gpkg"))
        area["total_records"] = ds.GetLayer(0).GetFeatureCount()
        ds = None

    only = {}
    for part in filter(None, args.only.split(";")):
        name, _, qs = part.partition(":")
        only[name] = set(filter(None, qs.split(","))) or None

    work = tempfile.mkdtemp(prefix="vbas-paper-comparison-")
    try:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=make_profile(work, args.plugin))
        plugin_id = plugin_description(os.path.join(env["QGIS_CUSTOM_CONFIG_PATH"], "profiles", "default", "python",
                                                    "plugins", "vbas"))
        jobs = []
        for name, area in AREAS.items():
            if only and name not in only:
                continue
            for qsel, qis in QI_SELECTIONS:
                if only and only[name] is not None and qsel not in only[name]:
                    continue
                for config in CONFIGS:
                    jobs.append((name, area, area_dirs[name], qsel, qis, config, args.seed, args.k))
        log("%d runs, %d at a time; host: %s; load average %s" % (len(jobs), args.jobs, host_description(), load_start))
        # Longest first (largest QI selections, ADC-fewest first), so the two workers finish together;
        # the rows keep the canonical order.
        cost = {label: rank for rank, label in enumerate(["entropy/ADC-fewest", "MaxCombs/ADC-fewest"])}
        order = sorted(range(len(jobs)), key=lambda i: (-math.prod(len(CATEGORIES[q]) for q in jobs[i][4]),
                                                        cost.get(jobs[i][5][0], 9), i))
        rows = [None] * len(jobs)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_one, jobs[i], env, work, args.timeout, args.max_iterations): i for i in order}
            for fut in concurrent.futures.as_completed(futures):
                rows[futures[fut]] = fut.result()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - t0

    meta = {"argv": args.argv, "host": host_description(), "started": started, "elapsed": elapsed, "jobs": args.jobs,
            "load_start": load_start, "load_end": load1(), "k": args.k, "seed": args.seed,
            "max_iterations": args.max_iterations, "areas": AREAS, "plugin": plugin_id}
    text, _ = report(rows, meta)
    write_report(text, args.out, args.json_out, {"meta": meta, "rows": rows})
    log("done in %.1f min; report in %s" % (elapsed / 60.0, args.out))
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
