#!/bin/bash
# VBAS with PostGIS in and out: vbas:anonymize reading the records once through QGIS's cursor and
# writing every output into PostGIS, with QGIS copying the same table as the floor.
#
#   bench/run_postgis_bench.sh [SIZE ...]     # sizes in regions; default 10000
#
# Assumes the build tree is built and Debian's postgresql and postgresql-15-postgis-3 are installed
# (.ci/setup). Per size: the inputs of bench/make_inputs.py (generated once, kept in VBAS_BENCH_DATA),
# loaded into a PostgreSQL server of the script's own (initdb in a temporary folder, a Unix socket in
# that folder, no TCP port; stopped and removed at the end), then, VBAS_REPEAT times each, alternating:
#   floor:     native:retainfields on the records table, every field, into a PostGIS table
#   anonymize: vbas:anonymize, regions and records from PostGIS, every output into PostGIS tables (a
#              release is read row by row whatever GROUP_IN_SOURCE says); its release recounted by SQL
# timed with /usr/bin/time -v (the qgis_process side: wall clock, CPU and max RSS; the server's own
# CPU is not in these figures). Prints progress on stderr and a markdown table on stdout.
# Environment: VBAS_BUILD, VBAS_BENCH_DATA, VBAS_QIS, VBAS_K, VBAS_REPEAT (default 2) as in run_bench.sh.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"

REPEAT=${VBAS_REPEAT:-2}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000)
QGIS_PROCESS=/usr/bin/qgis_process.bin

WORK=$(mktemp -d /tmp/vbas-pg-bench.XXXXXX)
trap 'pg_stop "$WORK"; rm -rf "$WORK"' EXIT
log() { echo "[run_postgis_bench $(date +%T)] $*" >&2; }
plugin_profile "$WORK" "$BUILD"
log "PostgreSQL server in $WORK"
pg_start "$WORK"
DB=$PG_DB

drop_outputs() { "${PSQL[@]}" -d vbas -c "DROP TABLE IF EXISTS floor, sites, aggregated, lookup, release, voronoi, evaluation" > /dev/null 2>&1; }

# anonymize: vbas:anonymize from and into PostGIS, timed; the release's smallest class counted by the server.
anonymize() {
  timed "$WORK/vbas" "$QGIS_PROCESS" --json run vbas:anonymize -- \
    "REGIONS=postgres://$DB key='fid' table=\"public\".\"regions\" (geom)" REGION_ID=region_id \
    "RECORDS=postgres://$DB key='fid' table=\"public\".\"records\"" RECORD_REGION=region_id "${QI_ARGS[@]}" "K=$K" \
    "SITE_POINTS=postgis:$DB table=\"public\".\"sites\" (geom)" "AGGREGATED=postgis:$DB table=\"public\".\"aggregated\" (geom)" \
    "LOOKUP=postgis:$DB table=\"public\".\"lookup\"" "ANONYMIZED=postgis:$DB table=\"public\".\"release\"" \
    "VORONOI=postgis:$DB table=\"public\".\"voronoi\" (geom)" "EVALUATION=postgis:$DB table=\"public\".\"evaluation\""
  log "anonymize: $(grep -o 'The records are read through [^."]*' "$WORK/vbas.json" | head -1)"
  local smallest qis_sql
  qis_sql=$(IFS=,; echo "${QIS[*]}")
  smallest=$("${PSQL[@]}" -d vbas -c "SELECT coalesce(min(n), 0) FROM (SELECT count(*) n FROM release GROUP BY aggregate_id, $qis_sql) e")
  [ "$smallest" -ge "$K" ] || { echo "the release has an EC of $smallest < $K records" >&2; exit 1; }
  drop_outputs
}

ROWS=()
for N in "${SIZES[@]}"; do
  IN=$DATA/$N
  /usr/bin/python3 "$ROOT/bench/make_inputs.py" --regions "$N" --out "$IN"
  log "size $N: loading into PostGIS"
  pg_load "$IN"
  RECORDS=$("${PSQL[@]}" -d vbas -c "SELECT count(*) FROM records")
  FIELD_ARGS=()
  for f in region_id age_group sex race insurance marital diagnosis; do FIELD_ARGS+=("FIELDS=$f"); done
  FLOOR_RUNS=(); RUNS=()
  for ((rep = 1; rep <= REPEAT; ++rep)); do
    log "size $N, run $rep/$REPEAT: floor (native:retainfields, PostGIS to PostGIS; load average $(cut -d' ' -f1-3 /proc/loadavg))"
    timed "$WORK/floor" "$QGIS_PROCESS" --json run native:retainfields -- "INPUT=postgres://$DB key='fid' table=\"public\".\"records\"" "${FIELD_ARGS[@]}" \
      "OUTPUT=postgis:$DB table=\"public\".\"floor\""
    FLOOR_RUNS+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
    log "size $N, run $rep/$REPEAT: floor $SECONDS_TAKEN s"
    drop_outputs
    anonymize
    RUNS+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
    log "size $N, run $rep/$REPEAT: anonymize: $SECONDS_TAKEN s (CPU $CPU_S s), max RSS $MAXRSS_KB kB"
  done
  read -r FS FKB FCPU <<< "$(fastest "${FLOOR_RUNS[@]}")"
  read -r AS AKB ACPU <<< "$(fastest "${RUNS[@]}")"
  ROWS+=("$(awk -v n="$N" -v rec="$RECORDS" -v f="$FS" -v a="$AS" -v ac="$ACPU" -v akb="$AKB" \
    'BEGIN { printf "| %d | %d | %.2f | %.2f (CPU %.1f) | %.2f | %.0f | %.0f |", n, rec, f, a, ac, a / f, rec / a, akb / 1024 }')")
done

echo
echo "QIs: ${QIS[*]}; k = $K. qgis_process wall clock, best of $REPEAT runs; CPU = user + system of qgis_process (the server's CPU is not counted)."
echo
echo "| regions | records | floor s (copy PostGIS to PostGIS) | vbas:anonymize s | / floor | records/s | peak MB |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
