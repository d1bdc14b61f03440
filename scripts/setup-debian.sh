#!/bin/sh
# setup-debian.sh: install what building and testing exactref needs on Debian 12 (idempotent).
set -eu
pkgs="build-essential cmake pkg-config libmpfr-dev libgmp-dev check python3 ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clang libclang-rt-14-dev libopenblas-dev python3-venv python3-dev python3-pip"
missing=""
pkgs="$pkgs time" # /usr/bin/time, for bench/memory.sh
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "setup-debian: all packages present"
    exit 0
fi
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "setup-debian: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
