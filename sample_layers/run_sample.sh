#!/usr/bin/env bash
# Runs the whole VBAS pipeline (vbas:anonymize) on the sample layers, writing the release and its
# evaluation to the folder given (default: out/, beside sample_layers/), then prints a short summary of
# the run (counts and field names only) and every warning the run raised. In a clone it uses the
# profile .ci/setup installed the plugin in (build/qgis-profile); elsewhere (the package's sample layers,
# copied to a folder of your own) your own QGIS profile, where it enables the plugin if it is not.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out}")
mkdir -p "$out"
rm -f "$out"/{sites,aggregated,lookup,anonymized,voronoi}.gpkg "$out"/evaluation.csv{,t} "$out"/report.html
export QT_QPA_PLATFORM=offscreen
if [ -d build/qgis-profile ]; then
  export QGIS_CUSTOM_CONFIG_PATH="$PWD/build/qgis-profile"
else
  /usr/bin/qgis_process.bin plugins 2> /dev/null | grep -q '^\* vbas' || /usr/bin/qgis_process.bin plugins enable vbas > /dev/null
fi
/usr/bin/qgis_process.bin --json run vbas:anonymize -- \
  REGIONS=sample_layers/ny8_tracts.gpkg REGION_ID=AREAKEY \
  RECORDS=sample_layers/patients.gpkg RECORD_REGION=tract_id \
  QI_FIELDS=age_group QI_FIELDS=sex QI_FIELDS=race K=5 SENSITIVE_FIELD=diagnosis \
  SITE_POINTS="$out/sites.gpkg" AGGREGATED="$out/aggregated.gpkg" LOOKUP="$out/lookup.gpkg" \
  ANONYMIZED="$out/anonymized.gpkg" VORONOI="$out/voronoi.gpkg" EVALUATION="$out/evaluation.csv" REPORT="$out/report.html" \
  > "$out/result.json" 2> "$out/qgis_process.log" || { cat "$out/qgis_process.log"; exit 1; }
# The summary, from qgis_process's JSON output (result.json: "results" holds the numbers, "log" the
# messages): counts and field names only, never a value of a record.
/usr/bin/python3 - "$out" <<'EOF'
import json, os, sqlite3, sys
out = sys.argv[1]
with open(os.path.join(out, "result.json"), encoding="utf-8") as f:
    document = json.load(f)
r, log = document["results"], document.get("log", {})
with sqlite3.connect("file:" + os.path.join(out, "anonymized.gpkg") + "?mode=ro", uri=True) as db:
    table = db.execute("SELECT table_name FROM gpkg_contents").fetchone()[0]
    fields = [row[1] for row in db.execute("PRAGMA table_info(\"%s\")" % table.replace('"', '""')) if row[1] != "fid"]
k = document["inputs"]["K"]
print("== VBAS release of the sample layers (vbas:anonymize, k = %s)" % k)
print("   records read        %d" % r["RECORDS"])
print("   released            %d" % r["RELEASED"])
print("   suppressed          %d (%s%%)" % (r["SUPPRESSED"], "%.2f" % r["SUPPRESSED_PERCENT"] if r.get("SUPPRESSED_PERCENT") is not None else "n/a"))
print("   aggregated regions  %d" % r["AGGREGATES"])
print("   smallest class      %s records (k = %s)" % (r["SMALLEST_EC"], k))
print("   released fields     %s" % ", ".join(fields))
print("== Outputs in %s" % out)
print("   anonymized.gpkg     the release: the only output for publication")
print("   aggregated.gpkg, lookup.gpkg, sites.gpkg, voronoi.gpkg: the aggregation (for the data custodian only)")
print("   evaluation.csv      every metric, one row (evaluation.csvt: its column types)")
print("   report.html         the report (for the data custodian only); result.json, qgis_process.log: this run's output")
warnings = log.get("warning", []) + log.get("error", [])
print("== Warnings: %s" % ("none" if not warnings else len(warnings)))
for w in warnings:
    print("   ! " + w)
EOF
