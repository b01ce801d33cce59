#!/bin/bash
# Generalization against the paper's method (docs/generalization.md), on ~3,000 counties and ~3.3 M
# records with four QIs (bench/make_generalization_inputs.py), k = 5, FIXED_SITES aggregates for all runs:
#
#   bash bench/generalization_comparison.sh [FIXED_SITES]     # default 909 (3,000 / 3.3)
#
#   (a) the paper's method: balanced density, the classes below k dropped;
#   (b) (a) with hierarchies: age_group.csv and marital.csv (ARX files), INTERVALS=income=20000,
#       sex value -> *, SUPPRESSION_LIMIT 5 %, LOCAL_SUPPRESSION=false (records dropped whole);
#   (c) (b) with local suppression (values written as *).
# Each through qgis_process, timed with /usr/bin/time -v; each release recounted here from the
# written table (SQLite GROUP BY over the QIs and aggregate_id, "*" a value of its own): its smallest
# class and rows. Builds nothing (run after .ci/setup). VBAS_GENERALIZATION_DATA: the inputs' folder
# (default /tmp/vbas-generalization, kept between runs). Prints a Markdown table on stdout.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"
generalization_inputs "${1:-909}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
plugin_profile "$WORK" "$BUILD"
declare -A extra=([a]="" [b]="${hierarchies[*]} LOCAL_SUPPRESSION=false" [c]="${hierarchies[*]}")
echo "| run | records | dropped | dropped % | records with * | values * | levels (age, sex, marital, income) | nodes (lattice) | generic NUE | normalised | GC | ARE | records generalized | aggregates (in pieces, releasing nothing) | smallest class (recount) | wall s | × (a) | max RSS MB |"
echo "|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"
for run in a b c; do
  echo "== run ($run), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  read -r -a args <<< "${extra[$run]}"
  timed "$WORK/$run" /usr/bin/qgis_process.bin --json run vbas:anonymize -- "${common[@]}" "${args[@]}" ANONYMIZED="$WORK/$run.gpkg"
  [ "$run" = a ] && FLOOR=$SECONDS_TAKEN
  /usr/bin/python3 - "$WORK/$run.json" "$WORK/$run.gpkg" "$run" "$SECONDS_TAKEN" "$FLOOR" "$MAXRSS_KB" <<'PY'
import json, sqlite3, sys
result, release, run, seconds, floor, rss = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
r = json.load(open(result))["results"]
with sqlite3.connect("file:%s?mode=ro" % release, uri=True) as db:
    table = db.execute("SELECT table_name FROM gpkg_contents").fetchone()[0]
    smallest, rows = db.execute('SELECT MIN(n), SUM(n) FROM (SELECT COUNT(*) n FROM "%s" GROUP BY age_group, sex, marital, income, aggregate_id)' % table).fetchone()
    stars = db.execute('SELECT SUM((age_group = \'*\') + (sex = \'*\') + (marital = \'*\') + (income = \'*\')) FROM "%s"' % table).fetchone()[0] or 0
assert rows == r["RELEASED"], (rows, r["RELEASED"])
assert smallest >= 5, smallest
assert r.get("VALUES_STARRED") in (None, stars), (r.get("VALUES_STARRED"), stars)
levels = r.get("LEVELS") or "0, 0, 0, 0"
levels = ", ".join(part.split(" = ")[1].split(" of ")[0] for part in levels.split(", ")) if " = " in levels else levels
print("| (%s) | %d | %d | %.2f | %d | %d | %s | %s | %.0f | %.4f | %.4f | %.4f | %d | %d (%d, %d) | %d | %.1f | %.2f | %d |" % (
    run, r["RECORDS"], r["SUPPRESSED"], 100.0 * r["SUPPRESSED"] / r["RECORDS"], r.get("RECORDS_STARRED") or 0, stars, levels,
    "%s (%s)" % (r["NODES_EVALUATED"], r["LATTICE_SIZE"]) if r.get("LATTICE_SIZE") else "-",
    r["LOSS_GENERIC_NUE"], r["LOSS_GENERIC_NUE_NORM"], r["LOSS_GC"], r["LOSS_ARE"], r["RECORDS_GENERALIZED"], r["AGGREGATES"], r["UNITS_IN_PIECES"], r["UNITS_RELEASING_NOTHING"], smallest, seconds, seconds / floor, rss // 1024))
PY
done
