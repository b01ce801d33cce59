#!/bin/bash
# The counting pass alone, both ways: vbas:estimatesitecount reads the regions, counts the records
# (the first pass, nothing else of the records) and estimates the site count. It runs with the records
# counted by their source (GROUP_IN_SOURCE=true: one GROUP BY run by SQLite or by the server) and
# row by row through QGIS's feature iterator (GROUP_IN_SOURCE=false), on the GeoPackage inputs of
# bench/make_inputs.py and on the same tables loaded into a PostgreSQL + PostGIS server of the
# script's own (bench_lib.sh's pg_start: a Unix socket in a temporary folder, stopped at the end).
#
#   bench/run_count_bench.sh [SIZE ...]     # sizes in regions; default 10000
#
# VBAS_REPEAT runs of each (default 2), alternating, the fastest reported; wall clock of qgis_process
# (the server's CPU is not in its CPU time). VBAS_PG=0 skips PostgreSQL. Prints progress on stderr
# and a markdown table on stdout.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"

REPEAT=${VBAS_REPEAT:-2}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000)

WORK=$(mktemp -d /tmp/vbas-count-bench.XXXXXX)
trap '[ "${VBAS_PG:-1}" = 0 ] || pg_stop "$WORK"; rm -rf "$WORK"' EXIT
log() { echo "[run_count_bench $(date +%T)] $*" >&2; }
plugin_profile "$WORK" "$BUILD"
[ "${VBAS_PG:-1}" = 0 ] || pg_start "$WORK"

# count SOURCE REGIONS RECORDS GROUPED: vbas:estimatesitecount, timed; checks the log says the source counted them exactly when GROUPED.
count() {
  timed "$WORK/count" /usr/bin/qgis_process.bin --json run vbas:estimatesitecount -- "REGIONS=$2" REGION_ID=region_id "RECORDS=$3" RECORD_REGION=region_id \
    "${QI_ARGS[@]}" "GROUP_IN_SOURCE=$4"
  local said=0
  grep -q "counted by their $1 source" "$WORK/count.json" && said=1
  [ "$said" = "$([ "$4" = true ] && echo 1 || echo 0)" ] || { echo "the log does not say how the records were counted (GROUP_IN_SOURCE=$4)" >&2; exit 1; }
}

# compare SOURCE REGIONS RECORDS: a table row for the size N.
compare() {
  local grouped=() rows=()
  for ((rep = 1; rep <= REPEAT; ++rep)); do
    count "$1" "$2" "$3" true
    grouped+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
    log "size $N, $1, run $rep/$REPEAT: counted by the source $SECONDS_TAKEN s (CPU $CPU_S s, max RSS $MAXRSS_KB kB)"
    count "$1" "$2" "$3" false
    rows+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
    log "size $N, $1, run $rep/$REPEAT: counted row by row $SECONDS_TAKEN s (CPU $CPU_S s, max RSS $MAXRSS_KB kB)"
  done
  read -r GS GKB GCPU <<< "$(fastest "${grouped[@]}")"
  read -r RS RKB RCPU <<< "$(fastest "${rows[@]}")"
  ROWS+=("$(awk -v n="$N" -v s="$1" -v g="$GS" -v gc="$GCPU" -v gkb="$GKB" -v r="$RS" -v rc="$RCPU" -v rkb="$RKB" \
    'BEGIN { printf "| %d | %s | %.2f (CPU %.1f, %.0f MB) | %.2f (CPU %.1f, %.0f MB) | %.2f |", n, s, g, gc, gkb / 1024, r, rc, rkb / 1024, g / r }')")
}

ROWS=()
for N in "${SIZES[@]}"; do
  IN=$DATA/$N
  /usr/bin/python3 "$ROOT/bench/make_inputs.py" --regions "$N" --out "$IN"
  cat "$IN/records.gpkg" > /dev/null
  compare GeoPackage "$IN/regions.gpkg|layername=regions" "$IN/records.gpkg|layername=records"
  if [ "${VBAS_PG:-1}" != 0 ]; then
    log "size $N: loading into PostGIS"
    pg_load "$IN"
    compare PostgreSQL "postgres://$PG_DB key='fid' table=\"public\".\"regions\" (geom)" "postgres://$PG_DB key='fid' table=\"public\".\"records\""
  fi
done
echo
echo "QIs: ${QIS[*]}. vbas:estimatesitecount (regions, the counting pass, the site count), qgis_process wall clock, best of $REPEAT runs."
echo
echo "| regions | source | counted by the source s | counted row by row s | source / row by row |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
