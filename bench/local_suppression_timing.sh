#!/bin/bash
# The time local suppression takes as QIs are added (docs/generalization.md, Limits): vbas:generalize
# on generated records, every QI generalized value -> * (GENERALIZE=true), LOCAL_SUPPRESSION on, k = 5.
#
#   bash bench/local_suppression_timing.sh RECORDS "QI_COUNTS" [TIMEOUT_S]
#   e.g. bash bench/local_suppression_timing.sh 100000 "4 6 8 10" 300
#
# The records (made here, seeded): RECORDS rows in the tracts of sample_layers/ny8_tracts.gpkg, QIs
# q1, q2, ... each of 4 values (drawn 40/30/20/10 %), so that most classes are small once a few QIs
# are named. Each run is stopped after TIMEOUT_S (default 300) seconds. Builds nothing (run after
# .ci/setup). Prints one line per QI count: QIs, records, wall seconds (or "stopped"), the run's last
# message.
set -euo pipefail
. "$(dirname "$0")/bench_lib.sh"
RECORDS=$1
read -r -a COUNTS <<< "$2"
TIMEOUT=${3:-300}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
plugin_profile "$WORK" "$BUILD"
MAX=0
for q in "${COUNTS[@]}"; do if [ "$q" -gt "$MAX" ]; then MAX=$q; fi; done
/usr/bin/python3 - "$ROOT/sample_layers/ny8_tracts.gpkg" "$WORK/records.csv" "$RECORDS" "$MAX" <<'PY'
import csv, random, sys
from osgeo import ogr
tracts, out, records, qis = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
dataset = ogr.Open(tracts)
ids = [f.GetField("areakey") for f in dataset.GetLayer()]
rng = random.Random(1)
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["tract_id"] + ["q%d" % (i + 1) for i in range(qis)])
    for _ in range(records):
        w.writerow([rng.choice(ids)] + [rng.choices("abcd", weights=[4, 3, 2, 1])[0] for _ in range(qis)])
PY
for q in "${COUNTS[@]}"; do
  fields=()
  for i in $(seq 1 "$q"); do fields+=("QI_FIELDS=q$i"); done
  start=$(date +%s.%N)
  status=0
  timeout "$TIMEOUT" /usr/bin/qgis_process.bin run vbas:generalize -- REGIONS="$ROOT/sample_layers/ny8_tracts.gpkg" REGION_ID=areakey \
    RECORDS="$WORK/records.csv" RECORD_REGION=tract_id "${fields[@]}" K=5 GENERALIZE=true LOCAL_SUPPRESSION=true \
    ANONYMIZED="$WORK/release.csv" > "$WORK/run.out" 2>&1 || status=$?
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  [ "$status" = 124 ] && seconds="stopped after $TIMEOUT"
  echo "$q QIs, $RECORDS records: $seconds s; $(grep -v '^\s*$' "$WORK/run.out" | tail -1 | cut -c1-160)"
done
