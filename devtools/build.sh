#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Configure and build cqpoll in one build directory.
#
# usage: devtools/build.sh [--tests SUITES] BUILDDIR [MESON_SETUP_ARGS...]
#
#   devtools/build.sh build
#   devtools/build.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false
#   CC=clang devtools/build.sh build-tsan -Db_sanitize=thread -Db_lundef=false
#   devtools/build.sh --tests stress build-tsan -Db_sanitize=thread ...
#
# --tests SUITES builds only what the tests of SUITES need ("A,B", or
# "!A,B" for all but those; devtools/test-targets.py), as `meson test`
# would before running them: for a build directory whose other tests never
# run (build-asan in devtools/test-all.sh).
#
# A relative BUILDDIR is taken from the top of the source tree. The directory
# remembers the arguments and $CC/$CXX it was set up with:
#   - not set up yet:                  meson setup
#   - set up by hand (no record):      meson setup --reconfigure with these args
#   - same arguments and compilers:    no setup; ninja regenerates if needed
#   - other arguments or compilers:    the directory is deleted and set up anew
#     (--reconfigure would keep options that are no longer given, and meson
#     cannot change the compiler of a build directory).
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"
    [ $# -ge 1 ] && exit 0
    exit 2
fi
suites=
if [ "$1" = --tests ]; then
    [ $# -ge 3 ] || { echo "build: --tests needs SUITES and BUILDDIR" >&2; exit 2; }
    suites=$2
    shift 2
fi

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$topdir"
builddir=$1
shift
case "$(realpath -m -- "$builddir")" in
"$topdir" | / | "$topdir"/lib* | "$topdir"/drivers* | "$topdir"/app* | "$topdir"/test* | "$topdir"/doc* | "$topdir"/devtools*)
    echo "build: refusing to use $builddir as a build directory" >&2
    exit 2
    ;;
esac

record="$builddir/.cqpoll-setup"
wanted=$(
    printf 'CC=%s\nCXX=%s\n' "${CC:-}" "${CXX:-}"
    [ $# -eq 0 ] || printf 'arg=%s\n' "$@"
)

run() {
    echo "+ $*"
    "$@"
}

if [ ! -f "$builddir/meson-private/coredata.dat" ]; then
    run meson setup "$builddir" "$@"
elif [ ! -f "$record" ]; then
    run meson setup --reconfigure "$builddir" "$@"
elif [ "$(cat "$record")" != "$wanted" ]; then
    echo "build: $builddir was set up with other arguments or compilers; setting it up anew"
    run rm -rf -- "$builddir"
    run meson setup "$builddir" "$@"
fi
printf '%s\n' "$wanted" >"$record"

if [ -z "$suites" ]; then
    run ninja -C "$builddir"
    exit 0
fi
# Regenerate first if needed: the test list must be this tree's.
run ninja -C "$builddir" build.ninja
targets=$(./devtools/test-targets.py "$builddir" "$suites")
echo "build: the targets of the tests of suites '$suites' only"
# shellcheck disable=SC2086 # one target a line, no spaces in them
run ninja -C "$builddir" $targets
