#!/usr/bin/env bash
# install-deps.sh - install what vramfit needs to build and test, from
# Debian packages, only when missing. Safe to run again, and beside another
# run of itself: the installing part holds a lock, and what is missing is
# looked at again once the lock is held (two suites started at once on a
# fresh machine: the second waits for the first's apt-get, then finds the
# packages there). Needs root (or sudo) only when something is missing.
set -euo pipefail

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# missing [--test]: sets need (packages) and browser (empty, or the browser
# package to try on its own)
missing() {
  need=() browser=""
  # libcurl4-openssl-dev: curl/curl.h for the build; the library itself is
  # loaded at run time (dlopen "libcurl.so.4") only when a Hub fetch is needed.
  for p in build-essential cmake pkg-config clang libclang-rt-14-dev \
           libyaml-dev libcjson-dev libsqlite3-dev sqlite3 python3 \
           libcurl4-openssl-dev ${VF_EXTRA_PKGS:-}; do
    have_pkg "$p" || need+=("$p")
  done
  [ "${1:-}" = "--test" ] || return 0
  # The example trainer the tune tests drive (CPU PyTorch, Debian's build).
  have_pkg python3-torch || need+=(python3-torch)
  # The report tests render each page in a real browser (tests/cli/report.sh);
  # installed on its own below: without it those checks are skipped, not failed.
  have_pkg chromium-headless-shell || have_pkg chromium || browser=chromium-headless-shell
  # A private single-node Slurm cluster for tests/cli/slurm.sh (daemons are
  # started by the test under a temp dir, never as services).
  for p in slurmctld slurmd slurm-client; do have_pkg "$p" || need+=("$p"); done
}

missing "${1:-}"
[ ${#need[@]} -eq 0 ] && [ -z "$browser" ] && exit 0

# apt-get's own lock waits (DPkg::Lock::Timeout) cover dpkg's lock but not
# the package lists' (apt-get update fails at once while another holds it),
# so the runs of this script take turns here. apt's locks are the
# machine's, so this one is too: a fixed path in /tmp (not $TMPDIR, which
# two suites may set apart); where it cannot be opened (another user's, a
# read-only /tmp) the run goes on without it, as before.
lock=/tmp/vramfit-install-deps.lock
if command -v flock >/dev/null && { exec 9>>"$lock"; } 2>/dev/null; then
  flock -w 1800 9 || { echo "install-deps: waited 30 min for $lock (another install-deps); going on" >&2; }
  missing "${1:-}"
  [ ${#need[@]} -eq 0 ] && [ -z "$browser" ] && exit 0
fi

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ -n "$browser" ]; then
  echo "install-deps: installing $browser (browser checks of the HTML reports)" >&2
  { $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq &&
    $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "$browser" >&2; } ||
    echo "install-deps: $browser could not be installed: the browser checks of tests/cli/report.sh will be skipped" >&2
fi
[ ${#need[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${need[*]}" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >&2
