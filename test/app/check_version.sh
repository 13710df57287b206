#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# --version names the tree: each program prints "NAME (cqpoll) VERSION", and
# in a git checkout also the commit it was built from, which git gives here
# independently. Controls: a line with VERSION alone (the programs had no
# more) fails in a checkout; tree-version.sh gives no answer (so meson falls
# back to VERSION) outside git and for a tree inside another checkout.
# usage: check_version.sh SRCDIR TREE-VERSION-SH PROGRAM...
set -euo pipefail
src=$1
tree_version=$2
shift 2
version=$(cat "$src/VERSION")
commit=
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$src" && pwd -P)" ]; then
	commit=$(git -C "$src" rev-parse --short=12 HEAD)
fi
bad=0
# check NAME LINE: the line a program printed.
check() {
	case $2 in
	"$1 (cqpoll) $version (git $commit"*")") [ -n "$commit" ] ;;
	"$1 (cqpoll) $version") [ -z "$commit" ] ;;
	*) false ;;
	esac
}
for prog in "$@"; do
	name=$(basename "$prog")
	line=$("$prog" --version)
	if check "$name" "$line"; then
		echo "ok: $line"
	else
		echo "FAIL: $name --version printed '$line' (VERSION $version, commit ${commit:-none})"
		bad=1
	fi
done
if [ -n "$commit" ]; then
	if check cqpoll-lab "cqpoll-lab (cqpoll) $version"; then
		echo "FAIL: control: VERSION alone passed in a git checkout"
		bad=1
	else
		echo "ok: control: VERSION alone fails in a git checkout"
	fi
	if "$tree_version" "$src/doc" "$version" >/dev/null 2>&1; then
		echo "FAIL: tree-version.sh answered for a directory inside another checkout"
		bad=1
	else
		echo "ok: no answer for a tree inside another checkout"
	fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if GIT_CEILING_DIRECTORIES=$(dirname "$tmp") "$tree_version" "$tmp" "$version" >/dev/null 2>&1; then
	echo "FAIL: tree-version.sh answered outside git"
	bad=1
else
	echo "ok: no answer outside git (meson falls back to VERSION)"
fi
exit $bad
