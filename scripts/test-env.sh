#!/usr/bin/env bash
# Makes sure what the tests talk to is here: Chromium (Debian package) for the browser tests,
# bubblewrap (bwrap) for the local sandboxes, PostgreSQL (with pgvector) and Redis for the
# scale-out tests, and on Linux x64 QEMU (with Debian's arm64 runtime libraries) and Wine to run
# the linux-arm64 and win-x64 executables (tests/toolchain/executables-platforms.test.ts).
# Idempotent; quiet when all is present.
set -uo pipefail

# ensure_deb <command or file> <Debian package>...: installs the packages when it is missing.
ensure_deb() {
  command -v "$1" >/dev/null 2>&1 && return
  [ -e "$1" ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-env: installing ${*:2} (Debian packages)..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${@:2}" >/dev/null) || echo "test-env: could not install ${*:2}" >&2
  else
    echo "test-env: $1 is missing; install it (apt-get install ${*:2})" >&2
  fi
}
ensure_deb chromium chromium
ensure_deb bwrap bubblewrap
if [ "$(uname -m)" = x86_64 ]; then
  ensure_deb qemu-aarch64-static qemu-user-static
  ensure_deb /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross
  ensure_deb wine wine wine64
fi

if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "test-env: starting PostgreSQL..."
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

# pgvector for PostgreSQL (the store's semantic search): this Debian release has no binary
# package for its PostgreSQL, so Debian's pgvector source package (from the next release, read
# through a private apt state: the machine's own sources stay as they are) is built against
# the server's headers and installed into it. The mirror is the one the machine's apt uses.
ensure_pgvector() {
  local ver work uri
  ver="$(ls /etc/postgresql 2>/dev/null | head -n1)"
  [ -n "$ver" ] || return 0
  [ -f "/usr/share/postgresql/$ver/extension/vector.control" ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "test-env: pgvector is missing for PostgreSQL $ver; the PostgreSQL pass then tests only the SQL fallback" >&2
    return 0
  fi
  uri="$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)"
  [ -n "$uri" ] || uri="$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\/debian\) .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n1)"
  [ -n "$uri" ] || { echo "test-env: no Debian mirror in apt's sources: cannot build pgvector" >&2; return 0; }
  echo "test-env: building pgvector for PostgreSQL $ver (Debian source package)..."
  work="$(mktemp -d)"
  chmod 755 "$work"
  (
    set -e
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$ver" make gcc >/dev/null
    mkdir -p "$work/lists/partial" "$work/src"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" >"$work/sources.list"
    apt_private=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/nonexistent -o "Dir::State::Lists=$work/lists")
    apt-get "${apt_private[@]}" update -qq
    cd "$work/src"
    apt-get "${apt_private[@]}" source --download-only -qq pgvector 2>/dev/null
    tar xzf pgvector_*.orig.tar.gz
    cd pgvector-*/
    # OPTFLAGS empty: no -march=native (as Debian builds it), so the library runs on any x86-64.
    make -s PG_CONFIG="/usr/lib/postgresql/$ver/bin/pg_config" OPTFLAGS="" >/dev/null
    make -s PG_CONFIG="/usr/lib/postgresql/$ver/bin/pg_config" install >/dev/null
  ) || echo "test-env: could not build pgvector for PostgreSQL $ver" >&2
  rm -rf "$work"
}
ensure_pgvector

if command -v redis-cli >/dev/null 2>&1 && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "test-env: starting Redis..."
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
exit 0
