#!/usr/bin/env bash
# Runs the whole VBAS pipeline (vbas:anonymize) on the sample layers with the plugin installed by
# .ci/setup, writing the release and its evaluation to the folder given (default: out/).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out}")
mkdir -p "$out"
rm -f "$out"/{sites,aggregated,lookup,anonymized,voronoi}.gpkg "$out"/evaluation.csv "$out"/report.html
export QT_QPA_PLATFORM=offscreen QGIS_CUSTOM_CONFIG_PATH="$PWD/build/qgis-profile"
/usr/bin/qgis_process.bin --json run vbas:anonymize -- \
  REGIONS=sample_layers/ny8_tracts.gpkg REGION_ID=AREAKEY \
  RECORDS=sample_layers/patients.gpkg RECORD_REGION=tract_id \
  QI_FIELDS=age_group QI_FIELDS=sex QI_FIELDS=race K=5 SENSITIVE_FIELD=diagnosis \
  SITE_POINTS="$out/sites.gpkg" AGGREGATED="$out/aggregated.gpkg" LOOKUP="$out/lookup.gpkg" \
  ANONYMIZED="$out/anonymized.gpkg" VORONOI="$out/voronoi.gpkg" EVALUATION="$out/evaluation.csv" REPORT="$out/report.html" \
  > "$out/result.json" 2> "$out/qgis_process.log" || { cat "$out/qgis_process.log"; exit 1; }
echo "== Release written to $out: anonymized.gpkg, aggregated.gpkg, lookup.gpkg, sites.gpkg, voronoi.gpkg; report: $out/report.html"
echo "== Evaluation ($out/evaluation.csv):"
column -s, -t < "$out/evaluation.csv" 2>/dev/null || cat "$out/evaluation.csv"
