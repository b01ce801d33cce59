#!/usr/bin/env bash
# tests/packages/run.sh, inside the fresh root as a plain user, after the package is installed.
set -euo pipefail
export QT_QPA_PLATFORM=offscreen
cd "$HOME"
fail() { echo "== FAILED: $*" >&2; exit 1; }
[ -z "${QGIS_PLUGINPATH:-}" ] || fail "QGIS_PLUGINPATH is set"
/usr/bin/qgis_process.bin plugins 2> /dev/null | grep -qw vbas || fail "qgis_process does not list the plugin vbas"
/usr/bin/qgis_process.bin plugins enable vbas > enable.log 2>&1 || { cat enable.log; fail "qgis_process plugins enable vbas"; }
/usr/bin/qgis_process.bin list 2> /dev/null > list.txt
for id in anonymize checkanonymity estimatesitecount evaluate generalize lpgeomask placesites voronoiaggregate; do
  grep -q "vbas:$id" list.txt || fail "qgis_process list has no vbas:$id"
done
echo "== The plugin is listed, enabled and its 8 algorithms are in qgis_process list"
for sample in vbas_pipeline.model3 vbas_generalization.model3 lp_geomask.model3 hierarchies/age_group.csv; do
  [ -f "/usr/share/qgis-plugin-vbas/sample_layers/$sample" ] || fail "the package has no sample_layers/$sample"
done

# docs/quickstart.md: its sh blocks, in order, from a copy of the installed sample layers' folder.
mkdir quickstart
cp -r /usr/share/qgis-plugin-vbas/sample_layers quickstart/
cd quickstart
for block in /mnt/packages/quickstart-*.sh; do
  bash -e "$block" > block.log 2>&1 || { tail -40 block.log; fail "docs/quickstart.md block $(basename "$block")"; }
done
echo "== docs/quickstart.md ran ($(ls /mnt/packages/quickstart-*.sh | wc -l) blocks)"
python3 /mnt/tests/check_release.py out/anonymized.gpkg sample_layers/patients.gpkg 5 age_group sex race

# README.md's quick start: its sh blocks, in order, from another copy of the installed sample layers.
mkdir "$HOME/readme"
cp -r /usr/share/qgis-plugin-vbas/sample_layers "$HOME/readme/"
cd "$HOME/readme"
# A block the quick start holds as it stands ran above: it is not run twice (CI's time).
ran=0
for block in /mnt/packages/readme-*.sh; do
  for same in /mnt/packages/quickstart-*.sh; do cmp -s "$block" "$same" && continue 2; done
  bash -e "$block" > block.log 2>&1 || { tail -40 block.log; fail "README.md block $(basename "$block")"; }
  ran=$((ran + 1))
done
echo "== README.md's quick start: $(ls /mnt/packages/readme-*.sh | wc -l) block(s), $ran of them not in docs/quickstart.md and run here"
[ "$ran" = 0 ] || python3 /mnt/tests/check_release.py out/anonymized.gpkg sample_layers/patients.gpkg 5 age_group sex race

# The installed run_sample.sh, from a copy of the sample layers, in the user's own profile.
mkdir "$HOME/sample" && cp -r /usr/share/qgis-plugin-vbas/sample_layers "$HOME/sample/"
[ -f "$HOME/sample/sample_layers/README.md" ] || fail "the package has no sample_layers/README.md"
bash "$HOME/sample/sample_layers/run_sample.sh" out > run_sample.log 2>&1 || { tail -40 run_sample.log; fail "sample_layers/run_sample.sh"; }
python3 /mnt/tests/check_release.py "$HOME/sample/out/anonymized.gpkg" "$HOME/sample/sample_layers/patients.gpkg" 5 age_group sex race
echo "== The installed sample_layers/run_sample.sh ran"
