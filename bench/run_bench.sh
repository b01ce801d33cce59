#!/bin/bash
# VBAS benchmark: core stages (bench_core) and the plugin end to end through qgis_process.
#
#   bench/run_bench.sh [SIZE ...]          # sizes in regions; default "1000 10000"
#
# Builds nothing: it assumes the build tree exists and is built (cmake -S . -B build &&
# cmake --build build), i.e. build/bench/bench_core and build/vbas/libvbas-<QGIS version>.so are there.
# Environment:
#   VBAS_BUILD       build tree (default <repo>/build)
#   VBAS_BENCH_CORE  the bench_core binary (default $VBAS_BUILD/bench/bench_core)
#   VBAS_BENCH_DATA  input cache (default /tmp/vbas-bench; inputs are generated once per size by
#                    bench/make_inputs.py and kept)
#   VBAS_QIS         the QI fields (default "age_group sex race insurance"; marital is the 5th)
#   VBAS_K           k (default 5)
#   VBAS_REPEAT      runs of the floor and of anonymize per size (default 3; the fastest is reported)
#   VBAS_RELEASE_FORMAT  extension of the release's file and of the floor's (default gpkg; e.g. csv, sqlite)
#
# Per size:
#   1. bench/make_inputs.py --regions SIZE (regions.gpkg + records.gpkg, 400-700 records per region)
#   2. bench_core SIZE --qis <number of QIs>   (in-memory data of the same kind, core stages timed)
#   3. startup: native:retainfields on a 1-row copy of the records (qgis_process start and exit)
#   4. floor:   native:retainfields on records.gpkg keeping every field, written to a file of the
#      release's format
#   5. vbas:anonymize on the same inputs, every output written to a GeoPackage but the release (its
#      format): the records read once, row by row (a release is never counted by the source), the
#      release written from the rows kept.
# 3-5 are timed with /usr/bin/time -v (wall clock, CPU and max RSS), and the fastest run of each is reported (the machine may be shared: every run and the
# load average are logged on stderr). The inputs are read once with cat
# before 4 so every run starts with a warm page cache. Prints progress on stderr and a markdown table
# on stdout.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"

REPEAT=${VBAS_REPEAT:-3}
FORMAT=${VBAS_RELEASE_FORMAT:-gpkg}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000 10000)

PYTHON=/usr/bin/python3
QGIS_PROCESS=/usr/bin/qgis_process.bin
BENCH_CORE=${VBAS_BENCH_CORE:-$BUILD/bench/bench_core}
PLUGIN=$BUILD/vbas
for f in "$BENCH_CORE" "$(ls "$PLUGIN"/libvbas-*.so 2> /dev/null | head -1)" "$QGIS_PROCESS" /usr/bin/time; do
  [ -e "$f" ] || { echo "missing $f (build first: cmake --build $BUILD)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/vbas-run-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
plugin_profile "$WORK" "$BUILD"

log() { echo "[run_bench $(date +%T)] $*" >&2; }


# core FIELD: a field of the BENCH_CORE line.
core() { tr ' ' '\n' <<< "$CORE_LINE" | awk -F= -v k="$1" '$1 == k { print $2 }'; }
# mrps FIELD: records/second of a core stage in millions.
mrps() { awk -v v="$(core "$1")" 'BEGIN { printf "%.1f", v / 1e6 }'; }
# result KEY: a value of the last vbas:anonymize results.
result() { "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][sys.argv[2]])' "$OUT/vbas.json" "$1"; }

# anonymize: vbas:anonymize on the size's inputs into $OUT, timed.
anonymize() {
  timed "$OUT/vbas" "$QGIS_PROCESS" --json run vbas:anonymize -- \
    "REGIONS=$IN/regions.gpkg|layername=regions" REGION_ID=region_id \
    "RECORDS=$IN/records.gpkg|layername=records" RECORD_REGION=region_id "${QI_ARGS[@]}" "K=$K" \
    "SITE_POINTS=$OUT/sites.gpkg" "AGGREGATED=$OUT/aggregated.gpkg" "LOOKUP=$OUT/lookup.gpkg" \
    "ANONYMIZED=$OUT/anonymized.$FORMAT" "VORONOI=$OUT/voronoi.gpkg" "EVALUATION=$OUT/evaluation.gpkg"
  rm -f "$OUT"/*.gpkg "$OUT"/anonymized.*
}

ROWS=()
for N in "${SIZES[@]}"; do
  IN=$DATA/$N
  log "size $N: inputs in $IN"
  "$PYTHON" "$ROOT/bench/make_inputs.py" --regions "$N" --out "$IN"
  OUT=$WORK/out-$N
  mkdir -p "$OUT"

  log "size $N: bench_core (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  "$BENCH_CORE" "$N" --qis ${#QIS[@]} --k "$K" | tee "$OUT/bench_core.txt" >&2
  CORE_LINE=$(grep '^BENCH_CORE ' "$OUT/bench_core.txt")

  FIELDS=(region_id age_group sex race insurance marital diagnosis)
  FIELD_ARGS=()
  for f in "${FIELDS[@]}"; do FIELD_ARGS+=("FIELDS=$f"); done

  log "size $N: qgis_process startup (retainfields on 1 row)"
  ogr2ogr -f GPKG "$OUT/one.gpkg" "$IN/records.gpkg" -sql "SELECT * FROM records LIMIT 1" -nln records
  timed "$OUT/startup" "$QGIS_PROCESS" --json run native:retainfields -- "INPUT=$OUT/one.gpkg|layername=records" "${FIELD_ARGS[@]}" "OUTPUT=$OUT/one-out.gpkg"
  STARTUP_S=$SECONDS_TAKEN

  cat "$IN/records.gpkg" "$IN/regions.gpkg" > /dev/null
  FLOOR_RUNS=()
  E2E_RUNS=()
  for ((rep = 1; rep <= REPEAT; ++rep)); do
    log "size $N, run $rep/$REPEAT: floor (native:retainfields, every field, to $FORMAT; load average $(cut -d' ' -f1-3 /proc/loadavg))"
    timed "$OUT/floor" "$QGIS_PROCESS" --json run native:retainfields -- "INPUT=$IN/records.gpkg|layername=records" "${FIELD_ARGS[@]}" "OUTPUT=$OUT/floor.$FORMAT"
    FLOOR_RUNS+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
    log "size $N, run $rep/$REPEAT: floor ${SECONDS_TAKEN} s (CPU ${CPU_S} s), max RSS ${MAXRSS_KB} kB"
    rm -f "$OUT"/floor.*

    log "size $N, run $rep/$REPEAT: vbas:anonymize"
    anonymize
    E2E_RUNS+=("$SECONDS_TAKEN $MAXRSS_KB $CPU_S")
    log "size $N, run $rep/$REPEAT: anonymize: ${SECONDS_TAKEN} s (CPU ${CPU_S} s, plugin RUNTIME $(result RUNTIME) s), max RSS ${MAXRSS_KB} kB; $(result SITES) sites, $(result AGGREGATES) aggregates, $(result RELEASED) released, $(result SUPPRESSED) suppressed"
  done
  read -r FLOOR_S FLOOR_KB FLOOR_CPU <<< "$(fastest "${FLOOR_RUNS[@]}")"
  read -r E2E_S E2E_KB E2E_CPU <<< "$(fastest "${E2E_RUNS[@]}")"
  RECORDS=$(result RECORDS)
  log "size $N: best of $REPEAT: floor $FLOOR_S s (runs: $(printf '%s; ' "${FLOOR_RUNS[@]}")), anonymize $E2E_S s (runs: $(printf '%s; ' "${E2E_RUNS[@]}"))"

  ROWS+=("$(awk -v n="$N" -v rec="$RECORDS" -v st="$STARTUP_S" -v e="$E2E_S" -v f="$FLOOR_S" -v ec="$E2E_CPU" -v fc="$FLOOR_CPU" -v ekb="$E2E_KB" -v fkb="$FLOOR_KB" \
    -v enc="$(mrps encode_rps)" -v sc="$(mrps sitecount_rps)" -v bd="$(mrps density_rps)" -v vo="$(mrps voronoi_rps)" \
    -v rl="$(mrps release_rps)" -v ev="$(mrps evaluate_rps)" -v kp="$(mrps keep_rps)" -v dr="$(mrps drain_rps)" -v cb="$(core bytes_per_record)" \
    'BEGIN { printf "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f | %.1f |",
             n, rec, enc, sc, bd, vo, rl, ev, kp, dr, cb, e, f, st, e / f, rec / e, ec, fc, ekb / 1024, fkb / 1024, ekb * 1024 / rec, (ekb - fkb) * 1024 / rec }')")
done

echo
echo "QIs: ${QIS[*]}; k = $K. Core rates in M records/s (bench_core, in-memory data of the same kind, its own record count);"
echo "end to end: qgis_process wall clock (/usr/bin/time -v), best of $REPEAT runs; startup = retainfields on 1 row; CPU = user + system of that run; peak = max RSS of that run."
echo
echo "e2e = vbas:anonymize: the records read once, the release written from the rows kept, as $FORMAT (the floor too)."
echo
echo "| regions | records | encode+hist | site count | bal. density | Voronoi+locate | release | evaluate | keep rows | drain+recount | core B/rec | e2e s | floor s | startup s | e2e/floor | e2e records/s | e2e CPU s | floor CPU s | e2e peak MB | floor peak MB | e2e B/rec | (e2e-floor) B/rec |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
