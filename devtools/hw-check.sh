#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Validate cqpoll on this machine's RDMA devices in one command, and write one
# report to paste into a bug report (doc/guides/hw-check.md).
#
# usage: devtools/hw-check.sh [--emulated] [--device=IBDEV] [--rxe=NETDEV | --no-rxe]
#                             [--build-dir=DIR] [--no-build] [--out=DIR]
#                             [--duration=S] [--iters=N]
#
#   (no option)      every RDMA device ibv_get_device_list() finds: the checks
#                    of cqpoll-hw-check on each, testpmd-cq ping-pong in poll,
#                    interrupt and adaptive modes beside ib_send_lat and
#                    ib_send_lat -e; without a device every check is listed
#                    as skipped with its reason, exit 77
#   --emulated       the same checks on the emulated mlx5 and verbs devices
#                    (what CI runs), perftest's argv and output parsing on a
#                    recorded sample, the rxe plan without running it
#   --device=IBDEV   only this device
#   --rxe=NETDEV     no device but rdma_rxe in the kernel: create an rxe link
#                    over NETDEV first (needs root); --no-rxe: never. Without
#                    either, it asks only at a terminal and never under CI
#   --build-dir=DIR  default build/: set up with devtools/build.sh if it is
#                    not, else brought up to date with ninja (--no-build: not)
#   --out=DIR        default BUILD/hw-check/: report.md, report.json and the
#                    raw outputs
#
# Exit status: 0 every check that ran passed; 1 one failed; 77 nothing ran
# on a device (no hardware); 2 bad usage.
set -euo pipefail

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
builddir=$topdir/build
build=yes
args=()
for a in "$@"; do
    case "$a" in
    -h | --help)
        awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    --build-dir=*) builddir=$(realpath -m -- "${a#--build-dir=}") ;;
    --no-build) build=no ;;
    --emulated | --no-rxe | --device=* | --rxe=* | --out=* | --duration=* | --iters=*)
        args+=("$a")
        ;;
    *)
        echo "hw-check: unknown option $a (see --help)" >&2
        exit 2
        ;;
    esac
done

# A hardware owner runs one command: set the tree up the way the project
# does if it is not, else bring it up to date (never reconfigured here:
# devtools/build.sh would set up anew a directory made with other options).
if [ "$build" = yes ]; then
    if [ ! -f "$builddir/build.ninja" ]; then
        echo "hw-check: setting up and building $builddir (devtools/build.sh)" >&2
        "$topdir/devtools/build.sh" "$builddir" >&2
    else
        ninja -C "$builddir" >&2
    fi
fi
if [ ! -x "$builddir/test/hw/cqpoll-hw-check" ]; then
    echo "hw-check: $builddir has no test/hw/cqpoll-hw-check: it needs the mlx5" \
        "driver (rdma-core with mlx5dv, libibverbs-dev) and the tests (-Dtests);" \
        "see the configure summary of meson setup" >&2
    exit 1
fi
exec python3 -B "$topdir/devtools/hw_check/hw_check.py" --build-dir="$builddir" "${args[@]}"
