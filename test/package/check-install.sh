#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# cqpoll as a distribution packager gets it: meson install into a scratch
# DESTDIR, then check what landed there, as an outside program would use it.
#
#   1. the verification kit: with -Demu=build (the default) no libcqpoll_emu
#      and no testpmd-cq; with -Demu=install both, the kit in its private
#      libdir only; no installed library in the public libdir defines an
#      ibv_* symbol;
#   2. every installed header compiles alone with no -D flag, as C11 with
#      -pedantic and as C++17;
#   3. an outside program linked against libcqpoll.a and libcqpoll_dpdk.a
#      through pkg-config --static gets all of cqpoll's trace points; linked
#      the naive way (the archives without --whole-archive, the negative
#      control) it gets none, so the check can fail;
#   4. "man cqpoll_poll_and_arm" shows the function's documentation, and the
#      guides are in share/doc/cqpoll.
#
# usage: check-install.sh BUILDDIR SRCDIR EMU(build|install) SANITIZE DOCS(0|1)
# Exits 77 (skip) in a sanitized build: its archives need the sanitizer
# runtime that an outside program does not link.
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
emu=$3
sanitize=$4
docs=$5

if [ "$sanitize" != none ]; then
	echo "SKIP: sanitized build (b_sanitize=$sanitize): outside programs link no sanitizer runtime"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqpoll-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
pass() {
	echo "ok: $*"
}

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"
	echo "FAIL: meson install"
	exit 1
}
prefix=$(meson introspect --buildoptions "$build" |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
libdir=$(meson introspect --buildoptions "$build" |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))')
case "$libdir" in
/*) ;;
*) libdir=$prefix/$libdir ;;
esac
root=$tmp/root$prefix
lib=$tmp/root$libdir
inc=$root/include

# 1. The verification kit.
kit=$(find "$tmp/root" -name 'libcqpoll_emu*' | sort)
app=$(find "$tmp/root" -name testpmd-cq)
if [ "$emu" = build ]; then
	[ -z "$kit" ] && pass "no libcqpoll_emu installed" || fail "libcqpoll_emu installed: $kit"
	[ -z "$app" ] && pass "no testpmd-cq installed" || fail "testpmd-cq installed without the kit option: $app"
	[ ! -d "$inc/cqpoll-emu" ] && pass "no kit headers" || fail "kit headers installed"
else
	if [ -n "$kit" ] && ! echo "$kit" | grep -qv "^$lib/cqpoll-emu/"; then
		pass "libcqpoll_emu only in $libdir/cqpoll-emu"
	else
		fail "libcqpoll_emu missing or outside its private libdir: ${kit:-none}"
	fi
	if [ -n "$app" ] && LD_LIBRARY_PATH="$lib" ldd "$app" | grep -q "$lib/cqpoll-emu/libcqpoll_emu"; then
		pass "testpmd-cq installed, finds the kit through its run path"
	elif [ -n "$app" ] && readelf -d "$app" | grep -q "RUNPATH.*$libdir/cqpoll-emu"; then
		pass "testpmd-cq installed with its run path to the kit"
	else
		fail "testpmd-cq missing or without a run path to the kit"
	fi
fi
for so in $(find "$lib" -maxdepth 1 -name '*.so*' -type f | sort); do
	defs=$(nm -D --defined-only "$so" | awk '$3 ~ /^ibv_/ { print $3 }')
	if [ -n "$defs" ]; then
		fail "$(basename "$so") defines libibverbs symbols: $defs"
	else
		pass "$(basename "$so"): no ibv_* definition"
	fi
done

# Dependencies' flags, with their directories as system headers: only our
# headers are held to -pedantic (DPDK's are not clean under it).
dep_cflags=()
for pc in libdpdk libibverbs liburing libfabric ucx; do
	if pkg-config --exists "$pc"; then
		for f in $(pkg-config --cflags "$pc"); do
			case "$f" in
			-I*) dep_cflags+=(-isystem "${f#-I}") ;;
			-D*) ;; # no feature macros: the headers must not need them
			*) dep_cflags+=("$f") ;;
			esac
		done
	fi
done

# 2. Every installed header alone.
nh=0
for h in "$inc"/cqpoll/*.h; do
	name=$(basename "$h")
	printf '#include <%s>\n#include <%s>\nint cqpoll_header_check_%s;\n' \
		"$name" "$name" "$(echo "$name" | tr -c 'a-zA-Z0-9\n' _)" >"$tmp/h.c"
	if ! cc -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only \
		-I"$inc/cqpoll" "${dep_cflags[@]}" "$tmp/h.c" >"$tmp/h.log" 2>&1; then
		fail "$name as C11: $(head -3 "$tmp/h.log")"
	fi
	if ! c++ -std=c++17 -x c++ -Wall -Wextra -Werror -fsyntax-only \
		-I"$inc/cqpoll" "${dep_cflags[@]}" "$tmp/h.c" >"$tmp/h.log" 2>&1; then
		fail "$name as C++17: $(head -3 "$tmp/h.log")"
	fi
	nh=$((nh + 1))
done
pass "$nh installed headers compiled alone (C11 -pedantic, C++17)"

# 3. Static link through pkg-config --static. Our .pc files point at the
# scratch prefix; libdpdk's stay the system's.
if [ -f "$lib/pkgconfig/cqpoll_dpdk.pc" ] && [ -f "$lib/libcqpoll_dpdk.a" ]; then
	mkdir "$tmp/pc"
	for pc in "$lib"/pkgconfig/cqpoll*.pc; do
		sed "s|^prefix=.*|prefix=$root|" "$pc" >"$tmp/pc/$(basename "$pc")"
	done
	export PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
	eal=(--no-huge -m 64 --no-pci --no-telemetry -l 0 --log-level=lib.eal:error
		--file-prefix="cqpoll-outside-$$")
	if ! cc -DALLOW_EXPERIMENTAL_API -o "$tmp/outside" "$src/test/package/outside_trace.c" \
		$(pkg-config --cflags cqpoll_dpdk) $(pkg-config --static --libs cqpoll_dpdk) \
		>"$tmp/link.log" 2>&1; then
		fail "static link through pkg-config --static: $(tail -5 "$tmp/link.log")"
	elif ldd "$tmp/outside" | grep -q 'libcqpoll'; then
		fail "pkg-config --static linked a shared libcqpoll: $(ldd "$tmp/outside" | grep libcqpoll)"
	elif out=$("$tmp/outside" "${eal[@]}" 2>&1); then
		pass "pkg-config --static link: $(echo "$out" | grep 'trace points')"
	else
		fail "pkg-config --static link: $out"
	fi
	# Negative control: the archives as a naive .pc would give them.
	if cc -DALLOW_EXPERIMENTAL_API -o "$tmp/outside-naive" "$src/test/package/outside_trace.c" \
		$(pkg-config --cflags cqpoll_dpdk) -L"$lib" -l:libcqpoll_dpdk.a -l:libcqpoll.a \
		$(pkg-config --libs libdpdk $(pkg-config --print-requires-private cqpoll-libs |
			awk '{ print $1 }')) -lpthread >"$tmp/link-naive.log" 2>&1; then
		out=$("$tmp/outside-naive" "${eal[@]}" 2>&1) && rc=0 || rc=$?
		if [ "$rc" -eq 1 ]; then
			pass "negative control (no --whole-archive) loses them: $(echo "$out" | grep 'trace points')"
		else
			fail "negative control kept its trace points (exit $rc): the check cannot fail"
		fi
	else
		fail "negative control did not link: $(tail -5 "$tmp/link-naive.log")"
	fi
else
	echo "skip: no libcqpoll_dpdk in this build (static trace-point check)"
fi

# 4. Man pages and guides.
if [ "$docs" = 1 ]; then
	if ! command -v man >/dev/null; then
		fail "man is not installed (devtools/install-deps.sh installs man-db)"
	elif MANPAGER=cat man -M "$root/share/man" cqpoll_poll_and_arm 2>/dev/null |
		grep -q "Poll, and arm the CQ when it is empty"; then
		pass "man cqpoll_poll_and_arm"
	else
		fail "man cqpoll_poll_and_arm: no page, or not the function's documentation"
	fi
else
	echo "skip: man pages (doxygen not found or -Ddocs=disabled)"
fi
for f in README.md CHANGELOG.md guides/contract.md; do
	[ -f "$root/share/doc/cqpoll/$f" ] && pass "share/doc/cqpoll/$f" ||
		fail "share/doc/cqpoll/$f not installed"
done

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "install: every check passed"
