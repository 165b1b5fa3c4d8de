#!/usr/bin/env bash
# Start a local Redis on 127.0.0.1:6379 when nothing answers there (installs Debian's redis-server if needed).
set -euo pipefail
answers() { (exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\r\n' >&3 && read -r -t 2 reply <&3 && [[ "$reply" == +PONG* ]]) 2>/dev/null; }
if answers; then exit 0; fi
if ! command -v redis-server >/dev/null 2>&1; then
  echo "installing redis-server (Debian package)" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no \
  --logfile /tmp/gpugauge-redis.log
for _ in $(seq 1 50); do answers && exit 0; sleep 0.1; done
echo "redis-server did not answer on 127.0.0.1:6379" >&2; exit 1
