# Fresh minimal Debian roots for tests/compat/run.sh and tests/packages/run.sh (sourced, as root):
#
#   source tests/compat/root.sh bookworm|trixie|forky
#   fresh_root SOURCE:TARGET:ro|rw ... -- SCRIPT ARGS...
#
# The root is made once with `debootstrap --variant=minbase` from Debian's packages, with only git (and
# the certificates git needs) added, and kept in $VBAS_COMPAT_CACHE (default /var/cache/vbas-compat) as
# a pristine base. fresh_root starts from a copy-on-write layer over that base (overlayfs), so each call
# sees a root that has never run anything; the layer is deleted afterwards. dpkg runs there without
# fsync (force-unsafe-io). Downloaded .deb files are
# kept between runs in the cache too, so a second run downloads nothing. fresh_root binds the folders
# given into the root, then runs the bash SCRIPT there as root with ARGS, in a clean environment and in
# a mount and PID namespace of its own: its mounts and processes end with it. With FRESH_ROOT_TMPFS set
# (a size: 4g), the copy-on-write layer is in memory, and removing it afterwards costs nothing.
# bookworm is Debian 12 (QGIS 3.22), trixie Debian 13 (QGIS 3.40 LTR), forky Debian's testing suite
# (QGIS 3.44).
#
#   dir=$(cached_layer NAME KEY SOURCE:TARGET:ro|rw ... -- SCRIPT ARGS...)
#   FRESH_ROOT_LAYERS=$dir fresh_root ... -- SCRIPT ARGS...
#
# Installing QGIS's packages takes minutes that CI cannot spend on every run, so what a script installs
# can be kept as a layer over the base: cached_layer runs SCRIPT once in a fresh root and keeps what it
# changed as $cache/<suite>/layers/NAME-KEY, and fresh_root with FRESH_ROOT_LAYERS (folders, the top
# first, ":" between) starts over the base and those layers. KEY names what the layer was made from
# (a hash of the script that installs the packages, of the package's dependencies): a changed KEY
# makes a new layer. A layer older than VBAS_LAYER_DAYS days (default 7) is made again, so Debian's
# updates come in; with no layers (VBAS_COMPAT_CACHE empty, or a first run) everything is installed
# from nothing, as on a fresh machine.

suite=${1:?usage: source tests/compat/root.sh bookworm|trixie|forky}
case "$suite" in bookworm|trixie|forky) ;; *) echo "Unknown suite '$suite': bookworm, trixie or forky" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "A fresh Debian root needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

cache=${VBAS_COMPAT_CACHE:-/var/cache/vbas-compat}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
base="$cache/$suite/root"
archives="$cache/$suite/archives"
mkdir -p "$cache/$suite" "$archives/partial"

say() { echo "== [$suite] $*"; }

# The base root, made once per suite; one maker at a time.
make_base() {
  exec 9> "$cache/$suite/lock"
  flock 9
  if ! command -v debootstrap > /dev/null; then
    say "Installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap > /dev/null
  fi
  if [ ! -x "$base/usr/bin/git" ]; then
    say "Making the minimal root (debootstrap --variant=minbase)"
    rm -rf "$base.tmp"
    # debootstrap has a script per suite; a suite newer than this debootstrap uses sid's, which is the same.
    local script=/usr/share/debootstrap/scripts/$suite
    [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
    debootstrap --variant=minbase --include=git --cache-dir="$archives" \
      "$suite" "$base.tmp" "$mirror" "$script" > "$cache/$suite/debootstrap.log" 2>&1 \
      || { tail -20 "$cache/$suite/debootstrap.log"; exit 1; }
    # A mirror may serve a snapshot of the archive whose Release file is past its Valid-Until date
    # (debootstrap does not check it; apt does): accept it, in the test root only.
    echo 'Acquire::Check-Valid-Until "false";' > "$base.tmp/etc/apt/apt.conf.d/99vbas-snapshot-mirror"
    mv "$base.tmp" "$base"
  fi
  flock -u 9
}
make_base

fresh_root() {
  local binds=()
  while [ "$1" != -- ]; do binds+=("$1"); shift; done
  shift
  local run status=0
  run=$(mktemp -d "$cache/$suite/run.XXXXXX")
  mkdir -p "$run/layer" "$run/root"
  # Inside a private mount and PID namespace: the overlay, /proc, /sys, /dev, the binds, then chroot.
  local lower=$base
  [ -z "${FRESH_ROOT_LAYERS:-}" ] || lower="$FRESH_ROOT_LAYERS:$base"
  # With FRESH_ROOT_KEEP (a folder), the root's changes are written there, and kept (cached_layer).
  local layer=${FRESH_ROOT_KEEP:-$run/layer}
  unshare --mount --pid --fork --kill-child --propagation private bash -s -- \
      "$lower" "$run" "$layer" "$archives" "${CI:-}" "${FRESH_ROOT_TMPFS:-}" "${#binds[@]}" "${binds[@]}" "$@" <<'INSIDE' || status=$?
set -euo pipefail
lower=$1 run=$2 layer=$3 archives=$4 ci=$5 tmpfs=$6 count=$7
shift 7
root="$run/root"
[ -z "$tmpfs" ] || mount -t tmpfs -o "size=$tmpfs" tmpfs "$layer"
mkdir -p "$layer/upper" "$layer/work"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$layer/upper,workdir=$layer/work" "$root"
# dpkg without fsync, as Debian's container images run it: a root that lives for one run needs no
# crash safety, and installing QGIS's ~700 packages takes minutes less.
echo force-unsafe-io > "$root/etc/dpkg/dpkg.cfg.d/vbas-unsafe-io"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mount --bind "$archives" "$root/var/cache/apt/archives"
for (( i = 0; i < count; i++ )); do
  IFS=: read -r source target mode <<< "$1"
  shift
  mkdir -p "$root$target"
  mount --bind -o "$mode" "$source" "$root$target"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
script=$1
shift
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI="$ci" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "$script" fresh-root "$@" < /dev/null
INSIDE
  rm -rf "$run"
  return "$status"
}

cached_layer() {
  local name=$1 key=$2
  shift 2
  local dir="$cache/$suite/layers/$name-$key"
  mkdir -p "$cache/$suite/layers"
  exec 8> "$cache/$suite/layers/$name.lock"
  flock 8
  # A layer is kept while it is younger than the base it was made over, and younger than the days allowed.
  if [ -d "$dir" ] && [ "$dir" -nt "$base" ] && [ -n "$(find "$dir" -maxdepth 0 -mtime "-${VBAS_LAYER_DAYS:-7}")" ]; then
    say "Using the cached root layer $name-$key" >&2
  else
    say "Making the root layer $name-$key" >&2
    rm -rf "$cache/$suite/layers/$name-"*
    mkdir -p "$dir.tmp"
    FRESH_ROOT_KEEP="$dir.tmp" FRESH_ROOT_TMPFS='' fresh_root "$@" >&2 || { rm -rf "$dir.tmp"; exit 1; }
    rm -rf "$dir.tmp/work"
    mv "$dir.tmp/upper" "$dir"
    rm -rf "$dir.tmp"
  fi
  flock -u 8
  echo "$dir"
}
