#!/usr/bin/env bash
# Runs README's two commands, exactly as README writes them, in a fresh minimal Debian root:
#
#   bash tests/compat/run.sh bookworm|trixie|forky
#
# bookworm is Debian 12 (QGIS 3.22), trixie Debian 13 (QGIS 3.40 LTR), forky Debian's testing suite
# (QGIS 3.44). The root is made once with `debootstrap --variant=minbase` from Debian's packages, with
# only git (and the certificates git needs) added, and kept in $VBAS_COMPAT_CACHE (default
# /var/cache/vbas-compat) as a pristine base. Each run starts from a copy-on-write layer over that base
# (overlayfs), so every run sees a root that has never run anything; the layer is deleted afterwards.
# Downloaded .deb files are kept between runs in the cache too, so a second run downloads nothing.
#
# Inside the root, a plain `git clone` of this checkout's HEAD (committed work only) runs README's first
# command (set-up and the main job on the sample layers), then its second (set-up and the whole test
# suite). The run fails if either fails, or if the second left anything new in the root's /tmp.
# Everything runs in a mount and PID namespace of its own: its mounts and processes end with it.
# Run as root.
set -euo pipefail

suite=${1:?usage: tests/compat/run.sh bookworm|trixie|forky}
case "$suite" in bookworm|trixie|forky) ;; *) echo "Unknown suite '$suite': bookworm, trixie or forky" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "tests/compat/run.sh needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

source_repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cache=${VBAS_COMPAT_CACHE:-/var/cache/vbas-compat}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
base="$cache/$suite/root"
archives="$cache/$suite/archives"
mkdir -p "$cache/$suite" "$archives/partial"

# One run per suite at a time: the base and the package cache are shared.
exec 9> "$cache/$suite/lock"
flock 9

say() { echo "== [$suite] $*"; }

if ! command -v debootstrap > /dev/null; then
  say "Installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap > /dev/null
fi

if [ ! -x "$base/usr/bin/git" ]; then
  say "Making the minimal root (debootstrap --variant=minbase)"
  rm -rf "$base.tmp"
  # debootstrap has a script per suite; a suite newer than this debootstrap uses sid's, which is the same.
  script=/usr/share/debootstrap/scripts/$suite
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
  debootstrap --variant=minbase --include=git --cache-dir="$archives" \
    "$suite" "$base.tmp" "$mirror" "$script" > "$cache/$suite/debootstrap.log" 2>&1 \
    || { tail -20 "$cache/$suite/debootstrap.log"; exit 1; }
  # A mirror may serve a snapshot of the archive whose Release file is past its Valid-Until date
  # (debootstrap does not check it; apt does): accept it, in the test root only.
  echo 'Acquire::Check-Valid-Until "false";' > "$base.tmp/etc/apt/apt.conf.d/99vbas-snapshot-mirror"
  mv "$base.tmp" "$base"
fi

run=$(mktemp -d "$cache/$suite/run.XXXXXX")
trap 'rm -rf "$run"' EXIT
mkdir -p "$run/upper" "$run/work" "$run/root"

# README's two commands, as written: the first two lines indented as code.
mapfile -t commands < <(grep -m 2 '^    [^ ]' "$source_repo/README.md" | sed 's/^    //')
[ ${#commands[@]} = 2 ] || { echo "README.md does not start with two commands" >&2; exit 1; }

say "README command 1: ${commands[0]}"
say "README command 2: ${commands[1]}"
start=$(date +%s)

# Inside a private mount and PID namespace: the overlay, /proc, /sys, /dev, then chroot.
unshare --mount --pid --fork --kill-child --propagation private bash -s -- \
    "$base" "$run" "$archives" "$source_repo" "${commands[0]}" "${commands[1]}" "${CI:-}" <<'INSIDE'
set -euo pipefail
base=$1 run=$2 archives=$3 source_repo=$4 first=$5 second=$6 ci=$7
root="$run/root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mount --bind "$archives" "$root/var/cache/apt/archives"
mkdir -p "$root/mnt/source"
mount --bind -o ro "$source_repo" "$root/mnt/source"
cp /etc/resolv.conf "$root/etc/resolv.conf"

in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI="$ci" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "$1"
}
in_root "git clone -q --no-local /mnt/source /root/vbas"
in_root "cd /root/vbas && git log -1 --format='== commit %h %s'"
echo "== README command 1"
in_root "cd /root/vbas && $first"
echo "== README command 2"
ls -A "$root/tmp" | sort > "$run/tmp-before"
in_root "cd /root/vbas && $second"
left=$(ls -A "$root/tmp" | sort | comm -13 "$run/tmp-before" -)
if [ -n "$left" ]; then
  echo "== The tests left these in /tmp:" >&2
  echo "$left" >&2
  exit 1
fi
INSIDE
say "README's two commands passed in $(( $(date +%s) - start )) s"
