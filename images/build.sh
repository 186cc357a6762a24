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
#   idemcheck/redis:7            the host's redis-server and its shared libraries,
#                                docker-imported; the harness passes its whole
#                                command line (internal/redisserver's Args).
#   idemcheck/mariadb:10.11      the host's mariadbd, its shared libraries and
#                                message files, with a data directory initialised
#                                here by the host's mariadb-install-db (root without
#                                a password from anywhere: the image only ever runs
#                                on a private test network); docker-imported.
#
# The store images are named after the version the tool runs (RedisImage,
# MariaDBImage in harness/docker/images.go). A host without redis-server or
# mariadb-server skips that image with a warning, so that `make images`
# still serves targets that do not need it; naming it in IDEMCHECK_IMAGES
# makes its absence an error.
#
# Every image is labelled idemcheck.source=<hash of what it is built from>:
# the binary (so any change to its Go sources), the Dockerfile, this script,
# and for the stores the installed server files. An image whose label
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
# tag_of CONST: an image the tool runs, from the one place that names it.
tag_of() {
  local t
  t=$(sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\"\(.*\)\"/\1/p" harness/docker/images.go)
  [ -n "$t" ] || { echo "images: $1 not found in harness/docker/images.go" >&2; return 2; }
  echo "$t"
}
pg_tag=$(tag_of PostgresImage)
redis_tag=$(tag_of RedisImage)
mariadb_tag=$(tag_of MariaDBImage)
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

# copy_libs ROOT FILE...: the shared-library closure of FILEs (ldd's
# answer, the loader included) into ROOT at the same paths.
copy_libs() {
  local root=$1 f lib
  shift
  for f in "$@"; do
    ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}'
  done | sort -u | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

# import_rootfs ROOT TAG SUM NAME CHANGE...: ROOT as an image, labelled
# with its name and source hash; each CHANGE is a Dockerfile instruction.
import_rootfs() {
  local root=$1 tag=$2 sum=$3 name=$4 c changes=()
  shift 4
  for c in "$@"; do changes+=(--change "$c"); done
  chmod 1777 "$root/tmp"
  tar -C "$root" -c . | docker import "${changes[@]}" \
    --change "LABEL idemcheck.image=$name" --change "LABEL idemcheck.source=$sum" - "$tag" >/dev/null
  built+=("$tag")
}

# files_of OUT PATH...: every file under PATHs with its size and mtime,
# the part of a store image's source hash that the host's packages make.
files_of() {
  local out=$1
  shift
  find "$@" -type f -printf '%p %s %T@\n' | sort >"$out"
}

# missing TAG WHAT HINT: a store image's server is not installed; an error
# when the image was asked for by name, a warning (and skipped) otherwise.
missing() {
  if [ "$explicit" = 1 ]; then
    echo "images: $1 is built from $2, which this machine lacks: $3" >&2
    return 3
  fi
  echo "images: skipping $1: this machine lacks $2 ($3); targets that need it cannot run in containers" >&2
  skipped+=("$1")
}

# wrong_version TAG HAVE: the installed server is not the version the tool runs.
wrong_version() {
  echo "images: idemcheck runs $1, but this machine has version $2: install that version, or change the tag in harness/docker/images.go" >&2
  return 3
}

# postgres_image: a root filesystem made of the installed PostgreSQL, the
# shared-library closure of its binaries and modules, a passwd with a
# postgres user and the static entrypoint, imported as an image.
postgres_image() {
  local pgv=$pg_major tag=$prefix/${pg_tag#*/}
  if [ "$mode" = tags ]; then report "$tag" ""; return; fi
  if [ ! -x "/usr/lib/postgresql/$pgv/bin/postgres" ]; then
    echo "images: idemcheck runs $pg_tag, built from PostgreSQL $pgv's server files, which this machine lacks (it has: $(ls /usr/lib/postgresql 2>/dev/null | tr '\n' ' ')): apt-get install postgresql-$pgv (on Ubuntu 24.04 from apt.postgresql.org)" >&2
    return 3
  fi
  local root=$work/pgroot
  mkdir -p "$root"
  gobuild "$root/pg-entrypoint" ./images/pg-entrypoint
  files_of "$work/pgfiles" "/usr/lib/postgresql/$pgv" "/usr/share/postgresql/$pgv"
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
  copy_libs "$root" "$root/bin/sh" "$root/usr/lib/postgresql/$pgv"/bin/* "$root/usr/lib/postgresql/$pgv"/lib/*.so
  printf 'root:x:0:0:root:/root:/sbin/nologin\npostgres:x:101:104:PostgreSQL:/var/lib/postgresql:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\npostgres:x:104:\n' >"$root/etc/group"
  chown -R 101:104 "$root/var/lib/postgresql" "$root/var/run/postgresql"
  import_rootfs "$root" "$tag" "$sum" postgres \
    "ENV PATH=/usr/lib/postgresql/$pgv/bin:/bin PGBIN=/usr/lib/postgresql/$pgv/bin PGDATA=/var/lib/postgresql/data/pgdata TZ=UTC LANG=C" \
    'EXPOSE 5432' 'ENTRYPOINT ["/pg-entrypoint"]'
}

# redis_image: the installed redis-server (on Debian a link to
# redis-check-rdb, which acts by the name it is run as) and its shared
# libraries. No entrypoint: the harness passes the whole command line.
redis_image() {
  local tag=$prefix/${redis_tag#*/}
  if [ "$mode" = tags ]; then report "$tag" ""; return; fi
  local bin
  bin=$(command -v redis-server 2>/dev/null) || { missing "$tag" redis-server "apt-get install redis-server"; return; }
  local have
  have=$(redis-server --version | sed -n 's/.* v=\([0-9]*\)\..*/\1/p')
  [ "$have" = "${tag##*:}" ] || { wrong_version "$tag" "$have"; return; }
  bin=$(readlink -f "$bin")
  files_of "$work/redisfiles" "$bin"
  local sum
  sum=$(hash "$work/redisfiles")
  if report "$tag" "$sum"; then return; fi
  if current "$tag" "$sum"; then kept+=("$tag"); return; fi
  local root=$work/redisroot
  mkdir -p "$root"/{usr/bin,data,tmp}
  cp -L "$bin" "$root/usr/bin/redis-server"
  copy_libs "$root" "$root/usr/bin/redis-server"
  import_rootfs "$root" "$tag" "$sum" redis 'ENV TZ=UTC LANG=C' 'EXPOSE 6379' 'WORKDIR /data' 'ENTRYPOINT ["/usr/bin/redis-server"]'
}

# mariadb_image: the installed mariadbd, its shared libraries, its
# message and character-set files, and /var/lib/mysql initialised by the
# host's mariadb-install-db with root allowed from anywhere (the harness
# creates the run's database over the network). The redo log size is the
# one internal/mysqlserver's Args runs with, so the first start resizes
# nothing. No entrypoint: the harness passes the whole command line.
mariadb_image() {
  local tag=$prefix/${mariadb_tag#*/}
  if [ "$mode" = tags ]; then report "$tag" ""; return; fi
  local install
  if [ ! -x /usr/sbin/mariadbd ] || ! install=$(command -v mariadb-install-db 2>/dev/null); then
    missing "$tag" "mariadb-server's mariadbd and mariadb-install-db" "apt-get install mariadb-server"
    return
  fi
  local have share=/usr/share/mysql
  have=$(/usr/sbin/mariadbd --version | sed -n 's/.* Ver \([0-9]*\.[0-9]*\)\..*/\1/p')
  [ "$have" = "${tag##*:}" ] || { wrong_version "$tag" "$have"; return; }
  [ -d /usr/share/mariadb ] && share=/usr/share/mariadb
  files_of "$work/mariadbfiles" /usr/sbin/mariadbd "$install" "$share"
  local sum
  sum=$(hash "$work/mariadbfiles")
  if report "$tag" "$sum"; then return; fi
  if current "$tag" "$sum"; then kept+=("$tag"); return; fi
  local root=$work/mariadbroot
  mkdir -p "$root"/{usr/sbin,usr/share,etc,tmp,var/lib}
  cp -L /usr/sbin/mariadbd "$root/usr/sbin/mariadbd"
  cp -a "$share" "$root/usr/share/"
  copy_libs "$root" "$root/usr/sbin/mariadbd"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nmysql:x:100:101:MariaDB:/var/lib/mysql:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nmysql:x:101:\n' >"$root/etc/group"
  # root from anywhere, and no account named after this build machine.
  cat >"$work/root-anywhere.sql" <<'SQL'
INSERT INTO mysql.global_priv SELECT '%', User, Priv FROM mysql.global_priv WHERE Host = 'localhost' AND User = 'root';
DELETE FROM mysql.global_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1', '%');
DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1', '%');
SQL
  if ! "$install" --no-defaults --datadir="$root/var/lib/mysql" --user="$(id -un)" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve --extra-file="$work/root-anywhere.sql" --innodb-log-file-size=16M >"$work/mariadb-install.log" 2>&1; then
    tail -20 "$work/mariadb-install.log" >&2
    return 1
  fi
  import_rootfs "$root" "$tag" "$sum" mariadb 'ENV TZ=UTC LANG=C' 'EXPOSE 3306' 'ENTRYPOINT ["/usr/sbin/mariadbd"]'
}

explicit=0
[ -n "${IDEMCHECK_IMAGES:-}" ] && explicit=1
want=${IDEMCHECK_IMAGES:-"gateway-sim toxiproxy reference-server postgres redis mariadb"}
skipped=()
for img in $want; do
  case "$img" in
    gateway-sim) scratch_image gateway-sim ./cmd/gateway-sim gateway-sim ;;
    toxiproxy) scratch_image toxiproxy github.com/Shopify/toxiproxy/v2/cmd/server toxiproxy-server ;;
    reference-server) scratch_image reference-server ./cmd/reference-server reference-server ;;
    postgres) postgres_image ;;
    redis) redis_image ;;
    mariadb) mariadb_image ;;
    *) echo "images: unknown image $img" >&2; exit 2 ;;
  esac
done

[ "$mode" = build ] || exit 0
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
[ ${#built[@]} -gt 0 ] && echo "images: built ${built[*]}"
[ ${#kept[@]} -gt 0 ] && echo "images: kept ${kept[*]} (built from these sources already; --force rebuilds)"
[ ${#skipped[@]} -gt 0 ] && echo "images: skipped ${skipped[*]} (see above)"
printf 'images: done in %.1fs\n' "$secs" 2>/dev/null || echo "images: done in ${secs}s"
