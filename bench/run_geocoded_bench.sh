#!/bin/bash
# Geocoded records: vbas:anonymize on records that are points with no region field, each located in the
# regions by point in polygon (in both passes), against QGIS copying the same points table.
#
#   bench/run_geocoded_bench.sh [REGIONS [POINTS]]     # default 10000 regions, 1000000 points
#
# Assumes the build tree is built. The inputs are bench/make_inputs.py's regions with --points POINTS
# (generated once, kept in VBAS_BENCH_DATA). VBAS_REPEAT times each, alternating:
#   floor:     native:retainfields on points.gpkg, every field and the points, to a GeoPackage
#   geocoded:  vbas:anonymize, RECORDS=points.gpkg without RECORD_REGION, every output to a GeoPackage
# timed with /usr/bin/time -v. Prints progress on stderr and a markdown table row on stdout.
# Environment: VBAS_BUILD, VBAS_BENCH_DATA, VBAS_QIS, VBAS_K, VBAS_REPEAT (default 2) as in run_bench.sh.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"

REPEAT=${VBAS_REPEAT:-2}
N=${1:-10000}
POINTS=${2:-1000000}
QGIS_PROCESS=/usr/bin/qgis_process.bin

WORK=$(mktemp -d /tmp/vbas-geocoded-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
log() { echo "[run_geocoded_bench $(date +%T)] $*" >&2; }
plugin_profile "$WORK" "$BUILD"

IN=$DATA/$N
/usr/bin/python3 "$ROOT/bench/make_inputs.py" --regions "$N" --out "$IN" --points "$POINTS"
cat "$IN/points.gpkg" "$IN/regions.gpkg" > /dev/null
FIELD_ARGS=()
for f in age_group sex race insurance marital diagnosis; do FIELD_ARGS+=("FIELDS=$f"); done
FLOOR_RUNS=(); GEOCODED_RUNS=()
for ((rep = 1; rep <= REPEAT; ++rep)); do
  log "run $rep/$REPEAT: floor (native:retainfields on the points; load average $(cut -d' ' -f1-3 /proc/loadavg))"
  timed "$WORK/floor" "$QGIS_PROCESS" --json run native:retainfields -- "INPUT=$IN/points.gpkg|layername=points" "${FIELD_ARGS[@]}" "OUTPUT=$WORK/floor.gpkg"
  FLOOR_RUNS+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
  log "run $rep/$REPEAT: floor $SECONDS_TAKEN s"
  rm -f "$WORK"/*.gpkg
  timed "$WORK/vbas" "$QGIS_PROCESS" --json run vbas:anonymize -- \
    "REGIONS=$IN/regions.gpkg|layername=regions" REGION_ID=region_id "RECORDS=$IN/points.gpkg|layername=points" "${QI_ARGS[@]}" "K=$K" \
    "SITE_POINTS=$WORK/sites.gpkg" "AGGREGATED=$WORK/aggregated.gpkg" "LOOKUP=$WORK/lookup.gpkg" \
    "ANONYMIZED=$WORK/anonymized.gpkg" "VORONOI=$WORK/voronoi.gpkg" "EVALUATION=$WORK/evaluation.gpkg"
  GEOCODED_RUNS+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
  RELEASED=$(/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"]; print(r["RELEASED"], r["SUPPRESSED"])' "$WORK/vbas.json")
  log "run $rep/$REPEAT: geocoded anonymize $SECONDS_TAKEN s (CPU $CPU_S s), max RSS $MAXRSS_KB kB; released, suppressed: $RELEASED"
  rm -f "$WORK"/*.gpkg
done
read -r FS FKB FCPU <<< "$(fastest "${FLOOR_RUNS[@]}")"
read -r GS GKB GCPU <<< "$(fastest "${GEOCODED_RUNS[@]}")"
echo
echo "QIs: ${QIS[*]}; k = $K. qgis_process wall clock, best of $REPEAT runs."
echo
echo "| regions | points | floor s (copy the points) | geocoded anonymize s | / floor | CPU s | peak MB | records/s end to end |"
echo "|---|---|---|---|---|---|---|---|"
awk -v n="$N" -v p="$POINTS" -v f="$FS" -v g="$GS" -v c="$GCPU" -v kb="$GKB" \
  'BEGIN { printf "| %d | %d | %.2f | %.2f | %.2f | %.1f | %.0f | %.0f |\n", n, p, f, g, g / f, c, kb / 1024, p / g }'
