# Sourced by .ci/run: makes sure the local PostgreSQL runs, creates a database for this run only, exports
# GUARD_TEST_POSTGRES_URL and drops the database when the run ends. Fails when PostgreSQL cannot be reached.
echo "== postgresql"
pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
if ! pg_up; then
  if command -v pg_lsclusters >/dev/null 2>&1; then
    pg_lsclusters --no-header 2>/dev/null | while read -r ver cluster _; do
      pg_ctlcluster --skip-systemctl-redirect "$ver" "$cluster" start || true
    done
  fi
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
if ! pg_up; then
  echo "FATAL: PostgreSQL is not reachable at 127.0.0.1:5432" >&2
  exit 1
fi
PGUSER_CI=postgres
psql -h 127.0.0.1 -U "$PGUSER_CI" -d postgres -c 'select 1' >/dev/null 2>&1 || PGUSER_CI=root
GUARD_CI_DB="guard_ci_$(date +%s)_$$"
psql -h 127.0.0.1 -U "$PGUSER_CI" -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE ${GUARD_CI_DB}" >/dev/null
export GUARD_TEST_POSTGRES_URL="postgres://${PGUSER_CI}@127.0.0.1:5432/${GUARD_CI_DB}?sslmode=disable"
# Tests that need databases of their own (several replicas, several runs) create them beside this one
# with this admin URL and drop them themselves.
export GUARD_TEST_POSTGRES_ADMIN_URL="postgres://${PGUSER_CI}@127.0.0.1:5432/postgres?sslmode=disable"
cleanup_pg() {
  psql -h 127.0.0.1 -U "$PGUSER_CI" -d postgres -c "DROP DATABASE IF EXISTS ${GUARD_CI_DB} WITH (FORCE)" >/dev/null || true
}
trap cleanup_pg EXIT
echo "using database ${GUARD_CI_DB}"
