#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A parent meson project uses cqpoll through dependency('cqpoll', fallback:
# 'cqpoll'): copy test/subproject/parent to a scratch directory, link
# subprojects/cqpoll to this tree, configure with the fallback forced (an
# installed cqpoll must not be picked up instead), build, and run its test.
#
# usage: test/subproject/run.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqpoll-subproject.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cp -r "$here/parent" "$tmp/parent"
cp "$here/../package/outside_uring.c" "$tmp/parent/"
mkdir "$tmp/parent/subprojects"
ln -s "$top" "$tmp/parent/subprojects/cqpoll"
# Only what the parent uses: the core and the sw driver, and the io_uring
# driver's library where liburing is found, quickly.
meson setup "$tmp/build" "$tmp/parent" --wrap-mode=nodownload \
    --force-fallback-for=cqpoll \
    -Dcqpoll:tests=disabled -Dcqpoll:app=disabled -Dcqpoll:docs=disabled \
    -Dcqpoll:dpdk=disabled -Dcqpoll:verbs=disabled -Dcqpoll:mlx5=disabled \
    -Dcqpoll:ucx=disabled
ninja -C "$tmp/build"
meson test -C "$tmp/build" --no-rebuild --print-errorlogs parent parent-uring
"$tmp/build/parent"
