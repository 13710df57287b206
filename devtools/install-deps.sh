#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install what cqpoll needs to build, test and document itself, on Debian 12.
#
# usage: devtools/install-deps.sh
#
# Only packages that are not installed yet are installed, so on a prepared
# machine this checks dpkg and returns without touching apt. Installing needs
# root (or sudo); it never reads stdin.
set -euo pipefail

packages=(
    build-essential     # gcc, make, libc headers
    g++                 # checks that the public headers compile as C++
    pkg-config
    meson
    ninja-build
    python3
    dpdk-dev            # DPDK tools (dpdk-devbind, dpdk-telemetry.py, ...)
    libdpdk-dev         # DPDK libraries and libdpdk.pc for app/testpmd-cq
    librte-net-vhost23  # ethdev driver tests: vhost, virtio_user, tap, memif,
    librte-net-virtio23 # af_packet PMDs (libdpdk-dev pulls them; named so
    librte-net-tap23    # that a slimmer libdpdk-dev cannot drop them)
    librte-net-memif23
    librte-net-af-packet23
    libibverbs-dev      # libibverbs, mlx5dv (libmlx5.pc): hardware drivers
    libnuma-dev         # needed by libdpdk.pc
    libjansson-dev      # testpmd-cq's sweep reads its points' JSON reports
    perftest            # ib_send_lat beside testpmd-cq (devtools/hw-check.sh)
    liburing-dev        # io_uring driver (drivers/uring), optional at build time
    libfabric-dev       # libfabric driver (drivers/ofi), optional at build time
    libucx-dev          # UCX driver (drivers/ucx), optional at build time
    ucx-utils           # ucx_info, ucx_perftest: the UCX peers on the results page
    clang               # ThreadSanitizer build when gcc's cannot be used
    libclang-rt-14-dev  # clang's sanitizer runtimes
    valgrind
    spin                # model checking of the arm protocol
    doxygen             # API reference (ninja -C build doc)
    python3-matplotlib  # testpmd-cq's sweep plots (tpcq-plot.py)
    babeltrace2         # reads testpmd-cq's CTF traces (--trace='cqpoll.*')
    abigail-tools       # abidw/abidiff: the ABI check (devtools/check-abi.sh)
    man-db              # the installed man pages are checked (test/package)
    manpages-dev        # ... against the system's man3 (glibc's free(3), sleep(3), error(3))
    # A static link through pkg-config --static (test/package) needs the
    # libraries that libdpdk.pc and libfabric.pc list as private:
    libsystemd-dev
    librdmacm-dev
    libpsm2-dev
    libpsm-infinipath1-dev
)

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    if [ "$status" != installed ]; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages are installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "install-deps: missing packages: ${missing[*]}" >&2
        echo "install-deps: run as root to install them" >&2
        exit 1
    fi
    sudo=(sudo -n)
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(
    -y -q
    -o DPkg::Lock::Timeout=300            # a fresh machine may run unattended-upgrades
    -o Dpkg::Options::=--force-confdef
    -o Dpkg::Options::=--force-confold
)

echo "install-deps: installing: ${missing[*]}"
"${sudo[@]}" apt-get "${apt_opts[@]}" update </dev/null
"${sudo[@]}" apt-get "${apt_opts[@]}" install "${missing[@]}" </dev/null
echo "install-deps: installed: ${missing[*]}"
