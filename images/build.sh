#!/usr/bin/env bash
# images/build.sh [--force | --print-tags | --print-hashes]: build every image
# container mode needs, from this repository and the host's packages,
# pulling nothing from a registry.
#
#   idemcheck/gateway-sim        static Go binary on scratch
#   idemcheck/toxiproxy          github.com/Shopify/toxiproxy/v2/cmd/server, static, on scratch
#   idemcheck/reference-server   static Go binary on scratch (reference + zoo)
#   idemcheck/postgres:15        the host's Debian postgresql-15 files, their shared
#                                libraries, /bin/sh (initdb needs popen) and a static
#                                Go entrypoint, docker-imported. The major is the one
#                                the tool runs (PostgresImage in harness/docker/images.go),
#                                whatever other majors the host has.
#
# Every image is labelled idemcheck.source=<hash of what it is built from>:
# the binary (so any change to its Go sources), the Dockerfile, this script,
# and for postgres the installed PostgreSQL files. An image whose label
# matches is kept; one built from other sources (another checkout, an older
# commit, a PostgreSQL upgrade) is rebuilt. --force rebuilds regardless.
# --print-tags and --print-hashes say what would be built, without Docker.
# IDEMCHECK_IMAGES="gateway-sim postgres" builds a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
self=images/build.sh

mode=build force=0
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    --print-tags) mode=tags ;;
    --print-hashes) mode=hashes ;;
    *) echo "usage: images/build.sh [--force | --print-tags | --print-hashes]" >&2; exit 2 ;;
  esac
done
prefix=${IDEMCHECK_IMAGE_PREFIX:-idemcheck}
# The PostgreSQL image the tool runs, from the one place that names it.
pg_tag=$(sed -n 's/^[[:space:]]*PostgresImage[[:space:]]*=[[:space:]]*"\(.*\)"/\1/p' harness/docker/images.go)
[ -n "$pg_tag" ] || { echo "images: PostgresImage not found in harness/docker/images.go" >&2; exit 2; }
pg_major=${pg_tag##*:}
if [ "$mode" = build ]; then
  command -v docker >/dev/null || { echo "images: docker CLI not found" >&2; exit 3; }
  docker info >/dev/null 2>&1 || { echo "images: the Docker engine is not reachable" >&2; exit 3; }
fi

start=$(date +%s.%N)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
built=() kept=()

# current TAG HASH: the image exists and was built from the same sources.
current() {
  [ "$force" = 0 ] && [ "$(docker image inspect -f '{{index .Config.Labels "idemcheck.source"}}' "$1" 2>/dev/null)" = "$2" ]
}

# hash FILE...: the first 16 hex digits of the files' sha256, this script included.
hash() { cat "$@" "$self" | sha256sum | cut -c1-16; }

# report TAG HASH: what the print modes print; returns 0 when done.
report() {
  case "$mode" in
    tags) echo "$1" ;;
    hashes) echo "$1 $2" ;;
    *) return 1 ;;
  esac
}

gobuild() { # gobuild OUT PKG
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$1" "$2"
}

# scratch_image NAME PKG BINARY: a static binary on scratch, built with the
# Dockerfile in images/NAME/ and a context that holds only the binary.
scratch_image() {
  local name=$1 pkg=$2 binary=$3 tag=$prefix/$1:latest
  if [ "$mode" = tags ]; then report "$tag" ""; return; fi
  local ctx=$work/$name
  mkdir -p "$ctx"
  gobuild "$ctx/$binary" "$pkg"
  cp "images/$name/Dockerfile" "$ctx/Dockerfile"
  local sum
  sum=$(hash "$ctx/$binary" "$ctx/Dockerfile")
  if report "$tag" "$sum"; then return; fi
  if current "$tag" "$sum"; then kept+=("$tag"); return; fi
  # The legacy builder's deprecation notice is noise; show output on failure only.
  if ! docker build -q --label idemcheck.image="$name" --label idemcheck.source="$sum" -t "$tag" "$ctx" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    return 1
  fi
  built+=("$tag")
}

# postgres_image: a root filesystem made of the installed PostgreSQL, the
# shared-library closure of its binaries and modules, a passwd with a
# postgres user and the static entrypoint, imported as an image.
postgres_image() {
  local pgv=$pg_major tag=$prefix/postgres:$pg_major
  if [ "$mode" = tags ]; then report "$tag" ""; return; fi
  if [ ! -x "/usr/lib/postgresql/$pgv/bin/postgres" ]; then
    echo "images: idemcheck runs $pg_tag, built from PostgreSQL $pgv's server files, which this machine lacks (it has: $(ls /usr/lib/postgresql 2>/dev/null | tr '\n' ' ')): apt-get install postgresql-$pgv (on Ubuntu 24.04 from apt.postgresql.org)" >&2
    return 3
  fi
  local root=$work/pgroot
  mkdir -p "$root"
  gobuild "$root/pg-entrypoint" ./images/pg-entrypoint
  find "/usr/lib/postgresql/$pgv" "/usr/share/postgresql/$pgv" -type f -printf '%p %s %T@\n' | sort >"$work/pgfiles"
  local sum
  sum=$(hash "$root/pg-entrypoint" "$work/pgfiles")
  if report "$tag" "$sum"; then return; fi
  if current "$tag" "$sum"; then kept+=("$tag"); return; fi
  mkdir -p "$root"/{etc,tmp,usr/lib/postgresql,usr/share/postgresql,var/lib/postgresql/data,var/run/postgresql}
  cp -a "/usr/lib/postgresql/$pgv" "$root/usr/lib/postgresql/"
  rm -rf "$root/usr/lib/postgresql/$pgv/lib/bitcode" "$root/usr/lib/postgresql/$pgv/lib"/llvmjit*
  cp -a "/usr/share/postgresql/$pgv" "$root/usr/share/postgresql/"
  [ -d /usr/share/zoneinfo ] && mkdir -p "$root/usr/share" && cp -a /usr/share/zoneinfo "$root/usr/share/"
  # initdb runs postgres through popen(3), that is /bin/sh: Debian's dash.
  mkdir -p "$root/bin"
  cp -L /bin/sh "$root/bin/sh"
  local f lib
  for f in "$root/bin/sh" "$root/usr/lib/postgresql/$pgv"/bin/* "$root/usr/lib/postgresql/$pgv"/lib/*.so; do
    ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}'
  done | sort -u | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  printf 'root:x:0:0:root:/root:/sbin/nologin\npostgres:x:101:104:PostgreSQL:/var/lib/postgresql:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\npostgres:x:104:\n' >"$root/etc/group"
  chmod 1777 "$root/tmp"
  chown -R 101:104 "$root/var/lib/postgresql" "$root/var/run/postgresql"
  tar -C "$root" -c . | docker import \
    --change "ENV PATH=/usr/lib/postgresql/$pgv/bin:/bin PGBIN=/usr/lib/postgresql/$pgv/bin PGDATA=/var/lib/postgresql/data/pgdata TZ=UTC LANG=C" \
    --change 'EXPOSE 5432' \
    --change 'LABEL idemcheck.image=postgres' \
    --change "LABEL idemcheck.source=$sum" \
    --change 'ENTRYPOINT ["/pg-entrypoint"]' \
    - "$tag" >/dev/null
  built+=("$tag")
}

want=${IDEMCHECK_IMAGES:-"gateway-sim toxiproxy reference-server postgres"}
for img in $want; do
  case "$img" in
    gateway-sim) scratch_image gateway-sim ./cmd/gateway-sim gateway-sim ;;
    toxiproxy) scratch_image toxiproxy github.com/Shopify/toxiproxy/v2/cmd/server toxiproxy-server ;;
    reference-server) scratch_image reference-server ./cmd/reference-server reference-server ;;
    postgres) postgres_image ;;
    *) echo "images: unknown image $img" >&2; exit 2 ;;
  esac
done

[ "$mode" = build ] || exit 0
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
[ ${#built[@]} -gt 0 ] && echo "images: built ${built[*]}"
[ ${#kept[@]} -gt 0 ] && echo "images: kept ${kept[*]} (built from these sources already; --force rebuilds)"
printf 'images: done in %.1fs\n' "$secs" 2>/dev/null || echo "images: done in ${secs}s"
