# Sourced by .ci/run: makes sure a Redis answers at 127.0.0.1:6379 (starting one when it is stopped) and
# exports GUARD_TEST_REDIS_URL. Tests use a key prefix of their own run (sessionredis, examples/server) and
# delete their keys, so runs never see each other's keys. Fails when Redis cannot be started.
echo "== redis"
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
if ! redis_up; then
  if ! command -v redis-server >/dev/null 2>&1; then
    (apt-get install -y redis-server >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y redis-server >/dev/null 2>&1; }) || true
  fi
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
fi
if ! redis_up; then
  echo "FATAL: Redis is not reachable at 127.0.0.1:6379" >&2
  exit 1
fi
export GUARD_TEST_REDIS_URL="redis://127.0.0.1:6379/0"
