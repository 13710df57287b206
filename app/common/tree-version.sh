#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The version the programs print with --version: VERSION and, when the
# source tree is a git checkout of its own, the commit it was built from
# (git describe: the last tag, the commits since, the hash, "-dirty" with
# uncommitted changes), so that two builds of one VERSION tell their trees
# apart. A tarball, or a tree unpacked inside another project's checkout
# (a distribution's packaging repository), gives no answer: exit 1, and
# meson's vcs_tag() falls back to VERSION alone.
#
# usage: tree-version.sh SRCDIR VERSION
set -eu
src=$1
version=$2
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) || exit 1
[ "$(cd "$top" && pwd -P)" = "$(cd "$src" && pwd -P)" ] || exit 1
desc=$(git -C "$src" describe --always --dirty --abbrev=12 2>/dev/null) || exit 1
echo "$version (git $desc)"
