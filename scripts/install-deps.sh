#!/usr/bin/env bash
# install-deps.sh - install what vramfit needs to build and test, from
# Debian packages, only when missing. Safe to run again. Needs root (or sudo)
# only when something is missing.
set -euo pipefail

# libcurl4-openssl-dev: curl/curl.h for the build; the library itself is
# loaded at run time (dlopen "libcurl.so.4") only when a Hub fetch is needed.
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential cmake pkg-config clang libclang-rt-14-dev \
         libyaml-dev libcjson-dev libsqlite3-dev sqlite3 python3 \
         libcurl4-openssl-dev ${VF_EXTRA_PKGS:-}; do
  have_pkg "$p" || need+=("$p")
done
if [ "${1:-}" = "--test" ]; then
  # The example trainer the tune tests drive (CPU PyTorch, Debian's build).
  have_pkg python3-torch || need+=(python3-torch)
  # The report tests render each page in a real browser (tests/cli/report.sh);
  # installed on its own below: without it those checks are skipped, not failed.
  have_pkg chromium-headless-shell || have_pkg chromium || browser=chromium-headless-shell
  # A private single-node Slurm cluster for tests/cli/slurm.sh (daemons are
  # started by the test under a temp dir, never as services).
  for p in slurmctld slurmd slurm-client; do have_pkg "$p" || need+=("$p"); done
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ -n "${browser:-}" ]; then
  echo "install-deps: installing $browser (browser checks of the HTML reports)" >&2
  { $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq &&
    $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "$browser" >&2; } ||
    echo "install-deps: $browser could not be installed: the browser checks of tests/cli/report.sh will be skipped" >&2
fi
[ ${#need[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${need[*]}" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >&2
