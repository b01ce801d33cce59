#!/usr/bin/env bash
# Installs the plugin's Debian package with apt in a fresh minimal Debian root that never saw the build
# tree (tests/compat/root.sh), one that holds the package's dependencies (apt installed them from the
# package once, and they are kept as a layer of the root, made again when the dependencies change or
# are a week old), then, as a plain user there: the plugin is listed by qgis_process with no
# QGIS_PLUGINPATH, is enabled, its algorithms are listed, the ```sh blocks of docs/quickstart.md and of
# README.md run from a copy of the installed sample layers, and so does the installed run_sample.sh; the
# releases they write are k-anonymous by a recount of its own (check_release.py). Run as root:
#
#   bash tests/packages/run.sh bookworm|trixie|forky build/qgis-plugin-vbas_<version>+qgis<QGIS>_amd64.deb
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../compat/root.sh" "${1:-}"
deb=${2:?usage: tests/packages/run.sh bookworm|trixie|forky PACKAGE.deb}
[ -f "$deb" ] || { echo "No package $deb" >&2; exit 2; }

# The package and the blocks of the quick start and README, one file each, in a folder of their own.
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
chmod 755 "$staging"
cp "$deb" "$staging/"
awk '/^```sh$/ { n++; block = sprintf("'"$staging"'/quickstart-%02d.sh", n); next }
     /^```/ { block = ""; next }
     block != "" { print > block }' "$here/../../docs/quickstart.md"
ls "$staging"/quickstart-*.sh > /dev/null || { echo "docs/quickstart.md has no sh block" >&2; exit 1; }
awk '/^```sh$/ { n++; block = sprintf("'"$staging"'/readme-%02d.sh", n); next }
     /^```/ { block = ""; next }
     block != "" { print > block }' "$here/../../README.md"
ls "$staging"/readme-*.sh > /dev/null || { echo "README.md has no sh block" >&2; exit 1; }
chmod 644 "$staging"/*

# The packages the package depends on, kept as a layer of the root made again when its dependencies
# change (root.sh, cached_layer): apt installs them once with the package, which is then removed.
start=$(date +%s)
depends_layer=$(cached_layer depends "$(dpkg-deb -f "$deb" Depends | sha256sum | cut -c1-16)" "$staging:/mnt/packages:ro" -- '
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q > /root/apt.log
apt-get install -y -q --no-install-recommends "/mnt/packages/$1" >> /root/apt.log 2>&1 || { tail -30 /root/apt.log; exit 1; }
dpkg --purge qgis-plugin-vbas >> /root/apt.log
rm /root/apt.log
' "$(basename "$deb")")

say "Installing $(basename "$deb") with apt in a fresh root"
export FRESH_ROOT_TMPFS=4g  # QGIS and the plugin take about 1.5 GB
FRESH_ROOT_LAYERS=$depends_layer fresh_root "$staging:/mnt/packages:ro" "$here:/mnt/tests:ro" -- '
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q > /root/apt.log
cd /mnt/packages
apt-get install -y -q --no-install-recommends "./$1" >> /root/apt.log 2>&1 || { tail -30 /root/apt.log; exit 1; }
echo "== Installed $(dpkg-query -W -f="\${Package} \${Version}" qgis-plugin-vbas) with QGIS $(dpkg-query -W -f="\${Version}" qgis) ($(grep -c "^Unpacking" /root/apt.log) package(s) unpacked; its dependencies were in the root layer)"
useradd --create-home analyst
runuser -u analyst -- bash /mnt/tests/as_user.sh
# What Python writes beside the plugin when QGIS runs as root goes with the package (its prerm).
export QT_QPA_PLATFORM=offscreen QGIS_CUSTOM_CONFIG_PATH=/root/profile
/usr/bin/qgis_process.bin plugins enable vbas > /dev/null 2>&1
/usr/bin/qgis_process.bin list > /dev/null 2>&1
[ -d /usr/share/qgis/python/plugins/vbas/__pycache__ ] || { echo "== FAILED: QGIS run as root wrote no vbas/__pycache__" >&2; exit 1; }
apt-get remove -y -q qgis-plugin-vbas >> /root/apt.log 2>&1
[ ! -e /usr/share/qgis/python/plugins/vbas ] || { echo "== FAILED: apt-get remove left $(find /usr/share/qgis/python/plugins/vbas | head -3)" >&2; exit 1; }
echo "== apt-get remove left nothing of the plugin behind"
' "$(basename "$deb")"
say "The package passed in $(( $(date +%s) - start )) s"
