# Sourced by .ci/run: installs Debian's Chromium for the dashboard's browser tests (server/ui) when it is
# missing and tells the tests where it is. With GUARD_TEST_CHROMIUM set, the browser tests fail (instead
# of skipping) when that browser cannot be started, so CI always runs them.
echo "== chromium"
chromium_bin="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium_bin" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
  chromium_bin="$(command -v chromium)"
fi
GUARD_TEST_CHROMIUM="$chromium_bin"
export GUARD_TEST_CHROMIUM
# Debian's wrapper script may print a harmless shell warning about memory on some machines: keep stdout.
"$GUARD_TEST_CHROMIUM" --version 2>/dev/null
unset chromium_bin
