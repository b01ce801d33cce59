# Shared by the benchmark scripts (sourced): timing a command and picking the fastest run.

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
