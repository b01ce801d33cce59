#!/bin/bash
# The evaluation's cost: vbas:evaluate (every metric, the two layers and the report)
# and vbas:checkanonymity (one pass over a released table), each against the floor of the same run:
# QGIS copying the table the step has to read (native:retainfields, every field, to GeoPackage).
#
#   bench/run_evaluate_bench.sh [SIZE ...]     # sizes in regions; default 10000
#
# Needs the build tree (build/vbas, build/bench/bench_core). Inputs come from bench/make_inputs.py
# (cached in VBAS_BENCH_DATA, default /tmp/vbas-bench); the release to evaluate and check is made
# first by vbas:anonymize (QIs age_group sex race insurance, k = 5, SEED 1). Each timed command runs
# VBAS_REPEAT times (default 2), alternating with its floor; the fastest run is reported. Prints
# progress on stderr and a markdown table on stdout.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${VBAS_BUILD:-$ROOT/build}
DATA=${VBAS_BENCH_DATA:-/tmp/vbas-bench}
REPEAT=${VBAS_REPEAT:-2}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000)
QGIS_PROCESS=/usr/bin/qgis_process.bin
QIS=(age_group sex race insurance)

WORK=$(mktemp -d /tmp/vbas-evaluate-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export QT_QPA_PLATFORM=offscreen QGIS_CUSTOM_CONFIG_PATH=$WORK/profile
mkdir -p "$QGIS_CUSTOM_CONFIG_PATH/profiles/default/python/plugins"
cp -r "$BUILD/vbas" "$WORK/vbas" # a rebuild during the benchmark does not change the binary under test
ln -s "$WORK/vbas" "$QGIS_CUSTOM_CONFIG_PATH/profiles/default/python/plugins/vbas"
"$QGIS_PROCESS" plugins enable vbas > /dev/null 2>&1

log() { echo "[run_evaluate_bench $(date +%T)] $*" >&2; }
# seconds CMD...: runs CMD (it must succeed) and prints its wall-clock seconds.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" > "$WORK/last.json" 2> "$WORK/last.err" || { tail -20 "$WORK/last.err" >&2; exit 1; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}
# best CMD...: the fastest of REPEAT runs of CMD.
best() {
  local runs=()
  for ((rep = 1; rep <= REPEAT; ++rep)); do runs+=("$(seconds "$@")"); done
  printf '%s\n' "${runs[@]}" | sort -n | head -1
}
# copy FILE LAYER: QGIS copies the layer, every field kept (the floor); fails when QGIS fails.
copy() {
  local fields=()
  for f in $(/usr/bin/python3 -c 'import sys; from osgeo import ogr; ds = ogr.Open(sys.argv[1]); d = ds.GetLayerByName(sys.argv[2]).GetLayerDefn(); print(" ".join(d.GetFieldDefn(i).GetName() for i in range(d.GetFieldCount())))' "$1" "$2"); do
    fields+=("FIELDS=$f")
  done
  "$QGIS_PROCESS" --json run native:retainfields -- "INPUT=$1|layername=$2" "${fields[@]}" "OUTPUT=$WORK/copy.gpkg" || return 1
  rm -f "$WORK/copy.gpkg"
}

echo "| regions | records | released | core metrics (s) | evaluate (s) | its floor: copy the records (s) | ratio | checkanonymity (s) | its floor: copy the release (s) | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for N in "${SIZES[@]}"; do
  IN=$DATA/$N
  /usr/bin/python3 "$ROOT/bench/make_inputs.py" --regions "$N" --out "$IN"
  OUT=$WORK/out-$N
  mkdir -p "$OUT"
  CORE=$("$BUILD/bench/bench_core" "$N" --qis ${#QIS[@]} --k 5 | grep '^BENCH_CORE ' | tr ' ' '\n' | awk -F= '$1 == "evaluate_s" { print $2 }')
  QI_ARGS=()
  for q in "${QIS[@]}"; do QI_ARGS+=("QI_FIELDS=$q"); done
  INPUTS=("REGIONS=$IN/regions.gpkg|layername=regions" REGION_ID=region_id "RECORDS=$IN/records.gpkg|layername=records" RECORD_REGION=region_id "${QI_ARGS[@]}" K=5)
  log "size $N: the release (vbas:anonymize)"
  "$QGIS_PROCESS" --json run vbas:anonymize -- "${INPUTS[@]}" SEED=1 "SITE_POINTS=$OUT/sites.gpkg" "AGGREGATED=$OUT/aggregated.gpkg" "LOOKUP=$OUT/lookup.gpkg" \
    "ANONYMIZED=$OUT/anonymized.gpkg" "VORONOI=$OUT/voronoi.gpkg" "EVALUATION=$OUT/anonymize-evaluation.gpkg" "REPORT=$OUT/anonymize.html" > "$OUT/anonymize.json" 2> "$OUT/anonymize.err"
  RECORDS=$(/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"]; print(r["RECORDS"], r["RELEASED"])' "$OUT/anonymize.json")
  cat "$IN/records.gpkg" "$OUT/anonymized.gpkg" > /dev/null

  log "size $N: evaluate and its floor"
  EVALUATE=$(best "$QGIS_PROCESS" --json run vbas:evaluate -- "${INPUTS[@]}" SENSITIVE_FIELD=diagnosis "SITES=$OUT/sites.gpkg|layername=sites" "LOOKUP=$OUT/lookup.gpkg|layername=lookup" \
    "EVALUATION=$OUT/evaluation.gpkg" "AGGREGATE_METRICS=$OUT/aggregate_metrics.gpkg" "REGION_RISK=$OUT/region_risk.gpkg" "REPORT=$OUT/report.html")
  FLOOR=$(best copy "$IN/records.gpkg" records)

  CHECK=n/a CHECK_FLOOR=n/a
  if "$QGIS_PROCESS" list 2> /dev/null | grep -q "vbas:checkanonymity"; then
    log "size $N: checkanonymity and its floor"
    CHECK=$(best "$QGIS_PROCESS" --json run vbas:checkanonymity -- "INPUT=$OUT/anonymized.gpkg|layername=anonymized" "${QI_ARGS[@]}" QI_FIELDS=aggregate_id K=5 \
      SENSITIVE_FIELD=diagnosis "VIOLATIONS=$OUT/violations.gpkg")
    CHECK_FLOOR=$(best copy "$OUT/anonymized.gpkg" anonymized)
  fi
  read -r TOTAL RELEASED <<< "$RECORDS"
  awk -v n="$N" -v t="$TOTAL" -v r="$RELEASED" -v c="$CORE" -v e="$EVALUATE" -v f="$FLOOR" -v k="$CHECK" -v kf="$CHECK_FLOOR" \
    'BEGIN { printf "| %d | %d | %d | %.3f | %.2f | %.2f | %.2fx | %s | %s | %s |\n", n, t, r, c, e, f, e / f, k, kf, (k == "n/a" ? "n/a" : sprintf("%.2fx", k / kf)) }'
done
