#!/usr/bin/env bash
# Runs README's two commands, exactly as README writes them, in a fresh minimal Debian root, then
# builds the Debian package and the plugin ZIP there and tests the package in another fresh root:
#
#   bash tests/compat/run.sh bookworm|trixie|forky
#
# The roots: tests/compat/root.sh. Inside the first, a plain `git clone` of this checkout's HEAD
# (committed work only, passed in as a git bundle, so that a worktree works too) runs README's first
# command (set-up and the main job on the sample layers), then its second (set-up and the whole test suite). The run fails if either fails, or if the second
# left anything new in the root's /tmp. Then `cpack -G DEB` makes the package there; it and the plugin
# repository (ZIP and plugins.xml) are copied out to build/packages/<suite>/ of this checkout, and
# tests/packages/run.sh installs the package in a root that never saw the build tree. Run as root.
set -euo pipefail
here=$(dirname "$0")
source "$here/root.sh" "${1:-}"
source_repo=$(git -C "$here" rev-parse --show-toplevel)
packages="$source_repo/build/packages/$suite"
rm -rf "$packages"
mkdir -p "$packages"
source_bundle=$(mktemp -d)
trap 'rm -rf "$source_bundle"' EXIT
git -C "$source_repo" bundle create -q "$source_bundle/vbas.bundle" HEAD

# README's two commands, as written: the first two lines indented as code.
mapfile -t commands < <(grep -m 2 '^    [^ ]' "$source_repo/README.md" | sed 's/^    //')
[ ${#commands[@]} = 2 ] || { echo "README.md does not start with two commands" >&2; exit 1; }

# The Debian packages .ci/setup installs (.ci/packages), kept as a layer of the root made again when
# .ci/packages changes (root.sh, cached_layer): README's commands find them installed.
packages_layer=$(cached_layer packages "$(git -C "$source_repo" show HEAD:.ci/packages | sha256sum | cut -c1-16)" "$source_bundle:/mnt/source:ro" -- '
set -euo pipefail
git -c advice.detachedHead=false -c init.defaultBranch=main clone -q /mnt/source/vbas.bundle /root/packages-of
bash /root/packages-of/.ci/packages > /root/packages.log 2>&1 || { tail -30 /root/packages.log; exit 1; }
rm -rf /root/packages-of /root/packages.log
')

say "README command 1: ${commands[0]}"
say "README command 2: ${commands[1]}"
start=$(date +%s)
# The compiler's output is kept between runs beside the root (ccache, which .ci/setup uses).
mkdir -p "$cache/$suite/ccache"
FRESH_ROOT_LAYERS=$packages_layer fresh_root "$source_bundle:/mnt/source:ro" "$packages:/mnt/packages:rw" "$cache/$suite/ccache:/root/.cache/ccache:rw" -- '
set -euo pipefail
git -c advice.detachedHead=false -c init.defaultBranch=main clone -q /mnt/source/vbas.bundle /root/vbas
cd /root/vbas
git log -1 --format="== commit %h %s"
echo "== README command 1"
bash -c "$1"
echo "== README command 2"
ls -A /tmp | sort > /root/tmp-before
bash -c "$2"
left=$(ls -A /tmp | sort | comm -13 /root/tmp-before -)
if [ -n "$left" ]; then
  echo "== The tests left these in /tmp:" >&2
  echo "$left" >&2
  exit 1
fi
echo "== The package and the plugin repository"
(cd build && cpack -G DEB > cpack.log) || { cat build/cpack.log; exit 1; }
cp build/qgis-plugin-vbas_*.deb build/plugin-repository/*.zip /mnt/packages/
' "${commands[0]}" "${commands[1]}"
say "README's two commands passed and the package was built in $(( $(date +%s) - start )) s"
bash "$source_repo/tests/packages/run.sh" "$suite" "$packages"/qgis-plugin-vbas_*.deb
