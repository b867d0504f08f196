#!/usr/bin/env bash
# install-deps.sh - install what vramfit needs to build and test, from
# Debian packages, only when missing. Safe to run again. Needs root (or sudo)
# only when something is missing.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential cmake pkg-config clang libclang-rt-14-dev \
         libyaml-dev libcjson-dev libsqlite3-dev sqlite3 python3 ${VF_EXTRA_PKGS:-}; do
  have_pkg "$p" || need+=("$p")
done
if [ "${1:-}" = "--test" ]; then
  # The example trainer the tune tests drive (CPU PyTorch, Debian's build).
  have_pkg python3-torch || need+=(python3-torch)
  # A private single-node Slurm cluster for tests/cli/slurm.sh (daemons are
  # started by the test under a temp dir, never as services).
  for p in slurmctld slurmd slurm-client; do have_pkg "$p" || need+=("$p"); done
fi
[ ${#need[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${need[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >&2
