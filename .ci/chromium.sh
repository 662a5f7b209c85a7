# Sourced by .ci/run: installs Debian's Chromium for the dashboard's browser tests when it is missing and
# tells the tests where it is. The browser tests fail (instead of skipping) under CI=true without it.
echo "== chromium"
if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi
GUARD_TEST_CHROMIUM="$(command -v chromium)"
export GUARD_TEST_CHROMIUM
"$GUARD_TEST_CHROMIUM" --version
