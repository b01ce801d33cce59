# Shared by the benchmark scripts (sourced): their settings, timing a command and picking the fastest
# run, the isolated QGIS profile, and a PostgreSQL server of their own.

# Settings from the environment: VBAS_BUILD (the build tree), VBAS_BENCH_DATA (the input cache, inputs
# generated once per size by bench/make_inputs.py and kept), VBAS_QIS (the QI fields; marital is a 5th),
# VBAS_K (k).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${VBAS_BUILD:-$ROOT/build}
DATA=${VBAS_BENCH_DATA:-/tmp/vbas-bench}
read -r -a QIS <<< "${VBAS_QIS:-age_group sex race insurance}"
K=${VBAS_K:-5}
QI_ARGS=()
for q in "${QIS[@]}"; do QI_ARGS+=("QI_FIELDS=$q"); done

# timed OUT_PREFIX CMD...: runs CMD under /usr/bin/time -v; stdout to OUT_PREFIX.json, the
# time report to OUT_PREFIX.time; sets SECONDS_TAKEN, MAXRSS_KB and CPU_S (user + system).
timed() {
  local prefix=$1
  shift
  if ! /usr/bin/time -v -o "$prefix.time" "$@" > "$prefix.json" 2> "$prefix.err"; then
    echo "command failed: $*" >&2
    tail -20 "$prefix.err" "$prefix.json" >&2
    exit 1
  fi
  SECONDS_TAKEN=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + t[i]; print s }' "$prefix.time")
  MAXRSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$prefix.time")
  CPU_S=$(awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { s += $2 } END { printf "%.2f", s }' "$prefix.time")
}

# generalization_inputs SITES: makes (or keeps) the inputs of bench/make_generalization_inputs.py in IN
# (VBAS_GENERALIZATION_DATA, default /tmp/vbas-generalization); sets common (the regions, the records,
# their four QIs, k = 5, SITES fixed sites) and hierarchies (the ARX files and the income intervals).
generalization_inputs() {
  IN=${VBAS_GENERALIZATION_DATA:-/tmp/vbas-generalization}
  /usr/bin/python3 "$ROOT/bench/make_generalization_inputs.py" --out "$IN"
  common=(REGIONS="$IN/regions.gpkg" REGION_ID=region_id RECORDS="$IN/records.gpkg" RECORD_REGION=region_id
    QI_FIELDS=age_group QI_FIELDS=sex QI_FIELDS=marital QI_FIELDS=income K=5 MODEL=3 FIXED_SITES="$1")
  hierarchies=(HIERARCHIES="$IN/age_group.csv" HIERARCHIES="$IN/marital.csv" INTERVALS=income=20000)
}

# fastest "SECONDS KB CPU" ...: the run with the least wall time (its seconds, max RSS and CPU seconds).
fastest() { printf '%s\n' "$@" | sort -n -k1,1 | head -1; }

# plugin_profile WORK BUILD: an isolated QGIS profile in WORK with a snapshot of the built plugin folder
# (a rebuild during the benchmark does not change the binary under test), enabled; exports the environment.
plugin_profile() {
  export QT_QPA_PLATFORM=offscreen QGIS_CUSTOM_CONFIG_PATH=$1/profile
  mkdir -p "$QGIS_CUSTOM_CONFIG_PATH/profiles/default/python/plugins"
  cp -r "$2/vbas" "$1/vbas"
  ln -s "$1/vbas" "$QGIS_CUSTOM_CONFIG_PATH/profiles/default/python/plugins/vbas"
  /usr/bin/qgis_process.bin plugins enable vbas > /dev/null 2>&1
}

# pg_start WORK: a PostgreSQL server of the benchmark's own in WORK/data (initdb; a Unix socket in WORK,
# no TCP port; as the postgres user when run as root) with a database vbas holding PostGIS; sets PSQL (the
# psql command), PG_DB (the connection as QGIS data sources start) and PG_GDAL. pg_stop WORK stops it.
pg_as_server() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_start() {
  PGBIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -1)")
  chmod 777 "$1"
  pg_as_server "$PGBIN/initdb" -D "$1/data" -A trust -U postgres --no-sync -E UTF8 --locale=C > /dev/null
  pg_as_server "$PGBIN/pg_ctl" -D "$1/data" -l "$1/server.log" -w \
    -o "-k $1 -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=1GB" start > /dev/null
  PSQL=("$PGBIN/psql" -h "$1" -U postgres -At -v ON_ERROR_STOP=1)
  "${PSQL[@]}" -d postgres -c "CREATE DATABASE vbas" > /dev/null
  "${PSQL[@]}" -d vbas -c "CREATE EXTENSION postgis" > /dev/null
  PG_DB="dbname='vbas' host=$1 user='postgres'"
  PG_GDAL="PG:dbname=vbas host=$1 user=postgres"
}
pg_stop() { pg_as_server "$PGBIN/pg_ctl" -D "$1/data" -m immediate stop > /dev/null 2>&1 || true; }

# pg_load IN: the bench inputs of folder IN as the tables regions and records.
pg_load() {
  "${PSQL[@]}" -d vbas -c "DROP TABLE IF EXISTS regions, records" > /dev/null 2>&1
  ogr2ogr -f PostgreSQL "$PG_GDAL" "$1/regions.gpkg" regions -nln regions -lco GEOMETRY_NAME=geom -lco FID=fid
  ogr2ogr -f PostgreSQL "$PG_GDAL" "$1/records.gpkg" records -nln records -lco FID=fid
  "${PSQL[@]}" -d vbas -c "VACUUM ANALYZE records" > /dev/null
}
