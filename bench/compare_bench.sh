#!/bin/bash
# vbas:compare against one vbas:anonymize run of the paper's method (docs/algorithms/compare.md), on the
# generated counties of the generalization comparison (bench/make_generalization_inputs.py: ~3,000
# counties, ~3.3 M records, four QIs, two ARX hierarchy files), FIXED_SITES aggregates for every run:
#
#   bash bench/compare_bench.sh [FIXED_SITES]     # default 909 (3,000 / 3.3)
#
#   (a) vbas:anonymize, the paper's method at k = 5: the floor of the comparison (it reads the records
#       twice and writes the release; the comparison reads them once and writes a table);
#   (b) vbas:compare: K_VALUES 5, 10, 20 x METHODS balanced density, ADC (fewest suppressed),
#       generalization without and with local suppression (the hierarchies of the generalization
#       comparison), and BASELINES the counties unaggregated, ids cropped to 5 characters (30 groups of
#       100 counties), no geography: 12 candidates and 9 baseline rows;
#   (c) (b) without ADC: 9 candidates and 9 baseline rows;
#   (d) vbas:anonymize with ADC (fewest suppressed) at k = 5: what (b)'s first ADC candidate costs alone.
# Each through qgis_process, timed with /usr/bin/time -v. Builds nothing (run after .ci/setup).
# VBAS_GENERALIZATION_DATA: the inputs' folder (default /tmp/vbas-generalization, kept between runs).
# Prints a Markdown table on stdout, and each candidate's time on stderr.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"
generalization_inputs "${1:-909}"
common+=(SEED=1)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
plugin_profile "$WORK" "$BUILD"
echo "== (a) anonymize, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
timed "$WORK/a" /usr/bin/qgis_process.bin --json run vbas:anonymize -- "${common[@]}" ANONYMIZED="$WORK/a.gpkg"
FLOOR=$SECONDS_TAKEN FLOOR_RSS=$MAXRSS_KB FLOOR_CPU=$CPU_S
# compare LABEL METHODS: runs (b) or (c), checks its rows against (a), sets the SECONDS_TAKEN of timed.
compare() {
  echo "== ($1) compare, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  timed "$WORK/$1" /usr/bin/qgis_process.bin --json run vbas:compare -- "${common[@]}" "${hierarchies[@]}" 'K_VALUES=5, 10, 20' \
    METHODS="$2" BASELINES=0,2,4 CROP_LENGTH=5 CANDIDATES="$WORK/$1.csv"
  /usr/bin/python3 - "$WORK/a.json" "$WORK/$1.json" "$WORK/$1.csv" <<'PY' >&2
import csv, json, sys
a, b = (json.load(open(p))["results"] for p in sys.argv[1:3])
rows = list(csv.DictReader(open(sys.argv[3])))
print("candidates: %d (CANDIDATES_MADE %s); anonymize suppressed %s" % (len(rows), b["CANDIDATES_MADE"], a["SUPPRESSED"]))
for r in rows:
    print("  %-60s %8s s  suppressed %9s  loss_generic_nue %14.0f" % (r["candidate"], r["runtime_s"], r["suppressed"], float(r["loss_generic_nue"])))
paper = next(r for r in rows if r["kind"] == "balanced_density" and r["k"] == "5")
assert int(paper["suppressed"]) == int(a["SUPPRESSED"]), (paper["suppressed"], a["SUPPRESSED"])
PY
}
row() { # row LABEL TEXT: a row of the table from the last timed run
  awk -v l="$1" -v t="$2" -v s="$SECONDS_TAKEN" -v f="$FLOOR" -v c="$CPU_S" -v r="$MAXRSS_KB" -v fr="$FLOOR_RSS" \
    'BEGIN { printf "| (%s) %s | %s | %.2f | %s | %d | %.2f |\n", l, t, s, s / f, c, r / 1024, r / fr }'
}
echo "| run | wall s | × (a) | CPU s | max RSS MB | × (a) |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| (a) \`vbas:anonymize\`, the paper's method | $FLOOR | 1.00 | $FLOOR_CPU | $((FLOOR_RSS / 1024)) | 1.00 |"
compare b 0,1,3,4
row b "\`vbas:compare\`, 12 candidates (ADC among them) and 9 baseline rows"
compare c 0,3,4
row c "\`vbas:compare\`, 9 candidates (no ADC) and 9 baseline rows"
echo "== (d) anonymize with ADC, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
timed "$WORK/d" /usr/bin/qgis_process.bin --json run vbas:anonymize -- "${common[@]}" METHOD=1 OBJECTIVE=1 ANONYMIZED="$WORK/d.gpkg"
row d "\`vbas:anonymize\` with ADC, fewest suppressed, k = 5"
