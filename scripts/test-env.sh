#!/usr/bin/env bash
# Makes sure what the tests talk to is here: Chromium (Debian package) for the browser tests,
# bubblewrap (bwrap) for the local sandboxes, PostgreSQL and Redis for the scale-out tests.
# Idempotent; quiet when all is present.
set -uo pipefail

# ensure_deb <command> <Debian package>: installs the package when the command is missing.
ensure_deb() {
  command -v "$1" >/dev/null 2>&1 && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-env: installing $2 (Debian package)..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null) || echo "test-env: could not install $2" >&2
  else
    echo "test-env: $1 is missing; install it (apt-get install $2)" >&2
  fi
}
ensure_deb chromium chromium
ensure_deb bwrap bubblewrap

if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "test-env: starting PostgreSQL..."
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

if command -v redis-cli >/dev/null 2>&1 && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "test-env: starting Redis..."
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
exit 0
