#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Write a debian/ directory into a cqpoll source tree, split as
# doc/guides/packaging.md ("Packages") says a distribution splits the
# install, to check that the project packages cleanly: built with dh and
# meson, then lintian. cqpoll ships no debian/ of its own (a distribution
# writes its own); this is the check, kept here so it can be rerun.
#
# usage: devtools/gen-debian.sh SRCDIR [--build]
#   SRCDIR   a clean tree (a fresh git clone): debian/ must not exist
#   --build  also run dpkg-buildpackage -us -uc -b there (DEB_BUILD_OPTIONS
#            nocheck added to the caller's, e.g. parallel=2: the test suites
#            are the tree's own business) and lintian on the result; needs
#            debhelper and lintian
#
# Packages: libcqpoll2, libcqpoll-ibv2, libcqpoll-uring2, libcqpoll-ofi2,
# libcqpoll-ucx2, libcqpoll-dpdk2, libcqpoll-dev, cqpoll-doc,
# cqpoll-examples, cqpoll-tools (cqpoll-lab, testpmd-cq, tpcq-peer and
# testpmd-cq's plugins for libfabric and UCX). The verification kit and
# testpmd-cq's emu plugin stay out (-Demu=build), as the guide says.
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"
	[ $# -ge 1 ] && exit 0
	exit 2
fi
src=$(cd "$1" && pwd)
build=${2:-}
[ -f "$src/meson.build" ] && [ -f "$src/VERSION" ] || {
	echo "gen-debian: $src is not a cqpoll tree" >&2
	exit 2
}
[ ! -e "$src/debian" ] || {
	echo "gen-debian: $src/debian exists" >&2
	exit 2
}
version=$(cat "$src/VERSION")
so=$(cut -d. -f1 "$src/ABI_VERSION")
d=$src/debian
mkdir -p "$d/source"

echo '3.0 (native)' >"$d/source/format"
cat >"$d/changelog" <<EOF
cqpoll ($version) UNRELEASED; urgency=medium

  * Package check of the cqpoll tree (devtools/gen-debian.sh).

 -- cqpoll packaging check <cqpoll@example.org>  $(date -R)
EOF

cat >"$d/rules" <<'EOF'
#!/usr/bin/make -f
export DEB_BUILD_MAINT_OPTIONS = hardening=+all

%:
	dh $@ --buildsystem=meson

override_dh_auto_configure:
	dh_auto_configure -- -Dtests=disabled -Demu=build -Ddocs=enabled -Dapp=enabled
EOF
chmod +x "$d/rules"

lib() { # NAME SUMMARY DEPENDS
	cat <<EOF

Package: $1
Section: libs
Architecture: any
Multi-Arch: same
Depends: \${shlibs:Depends}, \${misc:Depends}$3
Description: $2
 cqpoll polls completion queues from run-to-completion threads and sleeps on
 their completion events when traffic stops, without losing a wake-up.
 .
EOF
}
{
	cat <<EOF
Source: cqpoll
Section: libs
Priority: optional
Maintainer: cqpoll packaging check <cqpoll@example.org>
Build-Depends: debhelper-compat (= 13), meson, ninja-build, pkgconf,
 python3, doxygen, libnuma-dev, libibverbs-dev, liburing-dev, libfabric-dev,
 libucx-dev, libdpdk-dev, libjansson-dev
Standards-Version: 4.6.2
Rules-Requires-Root: no
EOF
	lib "libcqpoll$so" "poll completion queues without lost wake-ups (core library)" ""
	echo " This package holds the core library and the software CQ."
	lib "libcqpoll-ibv$so" "cqpoll's verbs and mlx5 drivers" ""
	echo " This package holds the drivers over rdma-core: verbs and mlx5 direct."
	lib "libcqpoll-uring$so" "cqpoll's io_uring driver" ""
	echo " This package holds the driver of an io_uring instance's CQ ring."
	lib "libcqpoll-ofi$so" "cqpoll's libfabric driver" ""
	echo " This package holds the driver of a libfabric CQ."
	lib "libcqpoll-ucx$so" "cqpoll's UCX driver" ""
	echo " This package holds the driver of a UCP worker as a CQ."
	lib "libcqpoll-dpdk$so" "cqpoll's DPDK component and ethdev driver" ""
	echo " This package holds the DPDK component and the ethdev Rx queue driver."
	cat <<EOF

Package: libcqpoll-dev
Section: libdevel
Architecture: any
Multi-Arch: same
Depends: \${misc:Depends}, libcqpoll$so (= \${binary:Version}),
 libcqpoll-ibv$so (= \${binary:Version}), libcqpoll-uring$so (= \${binary:Version}),
 libcqpoll-ofi$so (= \${binary:Version}), libcqpoll-ucx$so (= \${binary:Version}),
 libcqpoll-dpdk$so (= \${binary:Version}), libnuma-dev, libibverbs-dev,
 liburing-dev, libfabric-dev, libucx-dev, libdpdk-dev
Description: poll completion queues without lost wake-ups (development files)
 cqpoll polls completion queues from run-to-completion threads and sleeps on
 their completion events when traffic stops, without losing a wake-up.
 .
 This package holds the headers, the static libraries, the pkg-config files
 and the API's manual pages.

Package: cqpoll-doc
Section: doc
Architecture: all
Multi-Arch: foreign
Depends: \${misc:Depends}
Description: poll completion queues without lost wake-ups (guides)
 cqpoll polls completion queues from run-to-completion threads and sleeps on
 their completion events when traffic stops, without losing a wake-up.
 .
 This package holds the guides, the README, the release notes and the
 overview manual page, cqpoll(7).

Package: cqpoll-examples
Section: devel
Architecture: all
Multi-Arch: foreign
Depends: \${misc:Depends}, libcqpoll-dev
Description: poll completion queues without lost wake-ups (example sources)
 cqpoll polls completion queues from run-to-completion threads and sleeps on
 their completion events when traffic stops, without losing a wake-up.
 .
 This package holds the examples' sources, to build against the installed
 libraries.

Package: cqpoll-tools
Section: net
Architecture: any
Depends: \${shlibs:Depends}, \${misc:Depends}, python3
Suggests: python3-matplotlib
Description: poll completion queues without lost wake-ups (lab, benchmark)
 cqpoll polls completion queues from run-to-completion threads and sleeps on
 their completion events when traffic stops, without losing a wake-up.
 .
 This package holds cqpoll-lab, which replays arrival traces through the
 library's sleep policies on a virtual clock, and testpmd-cq, which measures
 polling and sleeping on real devices and queues (mlx5, verbs, io_uring,
 libfabric, UCX, DPDK ports), with tpcq-peer and the sweep's plot script
 (python3-matplotlib). Its emulated devices come with the verification kit,
 not packaged.
EOF
} >"$d/control"

for l in "" _ibv _uring _ofi _ucx _dpdk; do
	echo "usr/lib/*/libcqpoll$l.so.$so*" >"$d/libcqpoll${l//_/-}$so.install"
done
cat >"$d/libcqpoll-dev.install" <<'EOF'
usr/include/cqpoll
usr/lib/*/libcqpoll*.so
usr/lib/*/libcqpoll*.a
usr/lib/*/pkgconfig/cqpoll*.pc
usr/share/man/man3
EOF
printf 'usr/share/doc/cqpoll\nusr/share/man/man7\n' >"$d/cqpoll-doc.install"
echo 'usr/share/cqpoll/examples' >"$d/cqpoll-examples.install"
cat >"$d/cqpoll-tools.install" <<'EOF'
usr/bin/cqpoll-lab
usr/bin/testpmd-cq
usr/bin/tpcq-peer
usr/lib/*/testpmd-cq
usr/share/man/man1
EOF

# The copyright file quotes LICENSE, with its notice.
{
	cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: cqpoll
Source: the cqpoll tree

Files: *
Copyright: $(sed -n 's/^Copyright (c) //p' "$src/LICENSE")
License: BSD-3-Clause

License: BSD-3-Clause
EOF
	sed -n '/^Redistribution/,$p' "$src/LICENSE" | sed 's/^$/./; s/^/ /'
} >"$d/copyright"

echo "gen-debian: wrote $d"
[ "$build" = --build ] || exit 0
cd "$src"
DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b
changes=$(ls -t ../cqpoll_"$version"_*.changes | head -1)
lintian --info --display-info "$changes"
