#!/bin/bash
# ADC against balanced density: the core per trial move and in all (bench_core
# --adc 1), and vbas:anonymize end to end through qgis_process with METHOD = balanced density and
# with ADC under each objective, on the inputs of bench/make_inputs.py.
#
#   bench/run_adc_bench.sh [SIZE ...]      # sizes in regions; default "1000 10000"
#   VBAS_ADC_CORE_ONLY="56000"             # sizes run through bench_core only (no input files)
#
# Same environment as run_bench.sh (VBAS_BUILD, VBAS_BENCH_DATA, VBAS_QIS, VBAS_K). One run per
# configuration; prints progress on stderr and a markdown table on stdout.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${VBAS_BUILD:-$ROOT/build}
DATA=${VBAS_BENCH_DATA:-/tmp/vbas-bench}
read -r -a QIS <<< "${VBAS_QIS:-age_group sex race insurance}"
read -r -a CORE_ONLY <<< "${VBAS_ADC_CORE_ONLY:-}"
K=${VBAS_K:-5}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000 10000)
PYTHON=/usr/bin/python3
QGIS_PROCESS=/usr/bin/qgis_process.bin
BENCH_CORE=$BUILD/bench/bench_core
PLUGIN=$BUILD/vbas
for f in "$BENCH_CORE" "$(ls "$PLUGIN"/libvbas-*.so 2> /dev/null | head -1)" "$QGIS_PROCESS"; do
  [ -e "$f" ] || { echo "missing $f (build first: cmake --build $BUILD)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/vbas-adc-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export QT_QPA_PLATFORM=offscreen QGIS_CUSTOM_CONFIG_PATH=$WORK/profile
mkdir -p "$QGIS_CUSTOM_CONFIG_PATH/profiles/default/python/plugins"
cp -r "$PLUGIN" "$WORK/vbas"
ln -s "$WORK/vbas" "$QGIS_CUSTOM_CONFIG_PATH/profiles/default/python/plugins/vbas"
"$QGIS_PROCESS" plugins enable vbas > /dev/null 2>&1
log() { echo "[run_adc_bench $(date +%T)] $*" >&2; }
QI_ARGS=()
for q in "${QIS[@]}"; do QI_ARGS+=("QI_FIELDS=$q"); done

# core N: the BENCH_ADC lines of bench_core at N regions as "paper_s paper_tried paper_us suppression_s ...".
core() {
  "$BENCH_CORE" "$1" --qis ${#QIS[@]} --k "$K" --adc 1 | tee "$WORK/core-$1.txt" >&2
  awk '/^BENCH_ADC / { for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
                       printf "%s %.1f %d %.0f %d %d ", v["objective"], v["seconds"], v["tried"], 1e6 * v["seconds"] / v["tried"], v["suppressed_before"], v["suppressed_after"] }' "$WORK/core-$1.txt"
}

# anonymize N METHOD OBJECTIVE: wall seconds, ADC trial moves, SUPPRESSED and ADC_STOP of one vbas:anonymize run.
anonymize() {
  local in=$DATA/$1 out=$WORK/out
  rm -rf "$out" && mkdir -p "$out"
  local start=$(date +%s.%N)
  "$QGIS_PROCESS" --json run vbas:anonymize -- "REGIONS=$in/regions.gpkg|layername=regions" REGION_ID=region_id \
    "RECORDS=$in/records.gpkg|layername=records" RECORD_REGION=region_id "${QI_ARGS[@]}" "K=$K" SEED=1 "METHOD=$2" "OBJECTIVE=$3" \
    "SITE_POINTS=$out/s.gpkg" "AGGREGATED=$out/a.gpkg" "LOOKUP=$out/l.gpkg" "ANONYMIZED=$out/an.gpkg" "VORONOI=$out/v.gpkg" \
    "EVALUATION=$out/e.gpkg" > "$out/r.json" 2> "$out/err" || { tail -5 "$out/err" >&2; exit 1; }
  local end=$(date +%s.%N)
  "$PYTHON" -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"]; print("%.1f %s %s %s" % (float(sys.argv[2]), r["ADC_MOVES_TRIED"], r["SUPPRESSED"], r["ADC_STOP"].replace(" ", "_")))' \
    "$out/r.json" "$(echo "$end - $start" | bc)"
}

echo "| regions | core ADC paper: s, trials, us/trial, suppressed | core ADC suppression: s, trials, us/trial, suppressed | anonymize balanced density: s, suppressed | anonymize ADC paper: s (x BD), trials, stop, suppressed | anonymize ADC suppression: s (x BD), trials, stop, suppressed |"
echo "|---|---|---|---|---|---|"
for N in "${SIZES[@]}" "${CORE_ONLY[@]}"; do
  log "size $N: bench_core --adc 1"
  read -r _ ps pt pu pb pa _ ss st su sb sa <<< "$(core "$N")"
  row="| $N | $ps s, $pt, $pu us, $pb -> $pa | $ss s, $st, $su us, $sb -> $sa |"
  if [[ " ${CORE_ONLY[*]} " == *" $N "* ]]; then
    echo "$row (core only) | | |"
    continue
  fi
  "$PYTHON" "$ROOT/bench/make_inputs.py" --regions "$N" --out "$DATA/$N" >&2
  log "size $N: anonymize, balanced density"
  read -r bs _ bsup _ <<< "$(anonymize "$N" 0 0)"
  log "size $N: anonymize, ADC paper objective"
  read -r as at asup astop <<< "$(anonymize "$N" 1 0)"
  log "size $N: anonymize, ADC suppression objective"
  read -r xs xt xsup xstop <<< "$(anonymize "$N" 1 1)"
  echo "$row $bs s, $bsup | $as s ($(echo "scale=2; $as / $bs" | bc)x), $at, ${astop//_/ }, $asup | $xs s ($(echo "scale=2; $xs / $bs" | bc)x), $xt, ${xstop//_/ }, $xsup |"
done
