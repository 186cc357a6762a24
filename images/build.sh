#!/usr/bin/env bash
# images/build.sh [--force]: build every image container mode needs, from
# this repository and the host's packages, pulling nothing from a registry.
#
#   idemcheck/gateway-sim        static Go binary on scratch
#   idemcheck/toxiproxy          github.com/Shopify/toxiproxy/v2/cmd/server, static, on scratch
#   idemcheck/reference-server   static Go binary on scratch (reference + zoo)
#   idemcheck/postgres:15        the host's Debian postgresql-15 files, their shared
#                                libraries, /bin/sh (initdb needs popen) and a static
#                                Go entrypoint, docker-imported
#
# An image that already exists is kept as it is; --force rebuilds it.
# IDEMCHECK_IMAGES="gateway-sim postgres" builds a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH

force=0
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    *) echo "usage: images/build.sh [--force]" >&2; exit 2 ;;
  esac
done
command -v docker >/dev/null || { echo "images: docker CLI not found" >&2; exit 3; }
docker info >/dev/null 2>&1 || { echo "images: the Docker engine is not reachable" >&2; exit 3; }

start=$(date +%s.%N)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
built=() kept=()

exists() { [ "$force" = 0 ] && docker image inspect "$1" >/dev/null 2>&1; }

gobuild() { # gobuild OUT PKG
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$1" "$2"
}

# scratch_image NAME PKG BINARY: a static binary on scratch, built with the
# Dockerfile in images/NAME/ and a context that holds only the binary.
scratch_image() {
  local name=$1 pkg=$2 binary=$3 tag=idemcheck/$1:latest
  if exists "$tag"; then kept+=("$tag"); return; fi
  local ctx=$work/$name
  mkdir -p "$ctx"
  gobuild "$ctx/$binary" "$pkg"
  cp "images/$name/Dockerfile" "$ctx/Dockerfile"
  # The legacy builder's deprecation notice is noise; show output on failure only.
  if ! docker build -q --label idemcheck.image="$name" -t "$tag" "$ctx" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    return 1
  fi
  built+=("$tag")
}

# postgres_image: a root filesystem made of the installed PostgreSQL, the
# shared-library closure of its binaries and modules, a passwd with a
# postgres user and the static entrypoint, imported as an image.
postgres_image() {
  local pgv
  pgv=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1)
  if [ -z "$pgv" ]; then
    echo "images: PostgreSQL is not installed on this machine (apt-get install postgresql)" >&2
    return 3
  fi
  local tag=idemcheck/postgres:$pgv
  if exists "$tag"; then kept+=("$tag"); return; fi
  local root=$work/pgroot
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
  gobuild "$root/pg-entrypoint" ./images/pg-entrypoint
  chmod 1777 "$root/tmp"
  chown -R 101:104 "$root/var/lib/postgresql" "$root/var/run/postgresql"
  tar -C "$root" -c . | docker import \
    --change "ENV PATH=/usr/lib/postgresql/$pgv/bin:/bin PGBIN=/usr/lib/postgresql/$pgv/bin PGDATA=/var/lib/postgresql/data/pgdata TZ=UTC LANG=C" \
    --change 'EXPOSE 5432' \
    --change 'LABEL idemcheck.image=postgres' \
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

secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
[ ${#built[@]} -gt 0 ] && echo "images: built ${built[*]}"
[ ${#kept[@]} -gt 0 ] && echo "images: kept ${kept[*]} (already present; --force rebuilds)"
printf 'images: done in %.1fs\n' "$secs" 2>/dev/null || echo "images: done in ${secs}s"
