#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# cqpoll as a distribution packager gets it: meson install into a scratch
# DESTDIR, then check what landed there, as an outside program would use it.
#
#   1. the verification kit: with -Demu=build (the default) no libcqpoll_emu
#      and no emu plugin; with -Demu=install both, in their private
#      libdirs only; testpmd-cq installed either way, needing no kit,
#      libfabric or UCX library (its plugins do; a sw run loads neither,
#      control: an ofi run loads libfabric), running --dev=sw and
#      --dev=uring from the install, and the emulated devices with the kit
#      (without it: exit 2 naming the kit); no installed library in the
#      public libdir defines an ibv_* symbol;
#   2. every installed header compiles alone with no -D flag, as C11 with
#      -pedantic and as C++17;
#   3. an outside program linked against libcqpoll.a and libcqpoll_dpdk.a
#      through pkg-config --static gets all of cqpoll's trace points; linked
#      the naive way (the archives without --whole-archive, the negative
#      control) it gets none, so the check can fail;
#   4. the man pages fit man3: each named by its own cqpoll_ name, none
#      whose name the system's man3 already has, "man -w 3 free sleep error"
#      still glibc's with cqpoll's pages first on MANPATH (control: a free.3
#      planted among them is caught); "man cqpoll_poll_and_arm" is titled so
#      and shows #include <cqpoll.h>; the guides are in share/doc/cqpoll;
#   5. the drivers do not drag their stacks: a program that uses only the
#      software CQ, built with pkg-config --libs cqpoll (and --static), runs
#      with LD_LIBRARY_PATH at a copy of the installed libraries in which
#      every stack library (what the driver libraries need beyond what
#      libcqpoll needs: libibverbs, libmlx5, liburing, libfabric, UCX) is
#      replaced by a library of its soname that fails any load of it; ldd
#      shows none of them. Negative control: the same program linked also
#      against a driver library (as libcqpoll was before the drivers moved
#      out) fails there. Each installed driver library links from outside
#      through its own .pc, shared and --static, and the io_uring one runs
#      a NOP through cqpoll with its stack present; linked --static (also
#      after -Wl,--no-as-needed, as a linker without that default) the
#      program needs no libcqpoll* library (readelf -d). Negative control:
#      a driver's .pc with its old order (its -libs.pc before cqpoll.pc)
#      gives a program that needs libcqpoll.so;
#   6. share/doc/cqpoll holds only guides and their figures, and LICENSE
#      with its copyright notice (no lab or sweep data), and the examples'
#      sources installed in share/cqpoll/examples build with their Makefile
#      against the install and run.
#
# usage: check-install.sh BUILDDIR SRCDIR EMU(build|install) SANITIZE DOCS(0|1) APP(0|1)
# Exits 77 (skip) in a sanitized build: its archives need the sanitizer
# runtime that an outside program does not link.
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
emu=$3
sanitize=$4
docs=$5
app_built=$6

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
# The libcqpoll* sonames a program needs (readelf, not ldd: what the program
# itself names, not what its libraries load).
needs_cqpoll() {
	readelf -d "$1" | awk '$2 == "(NEEDED)" && $5 ~ /^\[libcqpoll/ { gsub(/[][]/, "", $5); print $5 }' |
		tr '\n' ' '
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

# 1. The verification kit, and testpmd-cq without it.
kit=$(find "$tmp/root" \( -name 'libcqpoll_emu*' -o -name 'tpcq-emu.so' \) | sort)
plugins=$lib/testpmd-cq
if [ "$emu" = build ]; then
	[ -z "$kit" ] && pass "no kit file installed (libcqpoll_emu, tpcq-emu.so)" ||
		fail "kit installed: $kit"
	[ ! -d "$inc/cqpoll-emu" ] && pass "no kit headers" || fail "kit headers installed"
else
	if [ -n "$kit" ] && ! echo "$kit" | grep -v "^$lib/cqpoll-emu/" | grep -qv "^$plugins/tpcq-emu.so$"; then
		pass "the kit only in $libdir/cqpoll-emu and its plugin in $libdir/testpmd-cq"
	else
		fail "the kit missing or outside its private directories: ${kit:-none}"
	fi
fi
# testpmd-cq: in every install where it is built, for real devices and
# queues; the kit's devices (its emu plugin) and the stacks that cost every
# start (libfabric, UCX) loaded only when a run asks for them.
tpcq=$root/bin/testpmd-cq
# Its EAL's defaults; a prefix of its own, as the tests' runs.
run_tpcq() {
	LD_LIBRARY_PATH="$lib" timeout 120 "$tpcq" -- "$@" 2>&1
}
if [ "$app_built" = 1 ]; then
	if [ -x "$tpcq" ]; then
		pass "testpmd-cq installed"
	else
		fail "testpmd-cq not installed"
	fi
	needed=$(readelf -d "$tpcq" | awk '$2 == "(NEEDED)" { print $5 }' | tr -d '[]' | tr '\n' ' ')
	case " $needed" in
	*" libcqpoll_emu"* | *" libfabric"* | *" libucp"* | *" libucs"*)
		fail "testpmd-cq needs what a run loads only when asked for: $needed" ;;
	*) pass "testpmd-cq needs no libcqpoll_emu, libfabric or UCX (NEEDED: $needed)" ;;
	esac
	# Negative control: the plugins do need theirs.
	for pl in "$plugins"/tpcq-*.so; do
		[ -e "$pl" ] || continue
		pneeded=$(readelf -d "$pl" | awk '$2 == "(NEEDED)" { print $5 }' | tr -d '[]' | tr '\n' ' ')
		case "$(basename "$pl") $pneeded" in
		"tpcq-emu.so "*libcqpoll_emu* | "tpcq-ofi.so "*libfabric* | "tpcq-ucx.so "*libucp*)
			pass "$(basename "$pl") needs its stack: $pneeded" ;;
		*) fail "$(basename "$pl") does not need its stack (NEEDED: $pneeded)" ;;
		esac
	done
	if out=$(run_tpcq --dev=sw --rate=2000 --duration=0.1) &&
		grep -q 'lost_wakeups *: 0' <<<"$out"; then
		pass "installed testpmd-cq --dev=sw runs"
	else
		echo "$out" | tail -20
		fail "installed testpmd-cq --dev=sw"
	fi
	# What the run loaded, the EAL's drivers among it: no libfabric or UCX
	# for sw (control: a run on ofi loads libfabric, seen the same way).
	stacks='file=(libfabric|libucp|libpsm_infinipath)\.so'
	loaded=$(LD_DEBUG=files run_tpcq --dev=sw --rate=2000 --duration=0.01 |
		grep -Eo "$stacks[^ ]*" | sort -u | tr '\n' ' ' || true)
	[ -z "$loaded" ] && pass "testpmd-cq --dev=sw loads no libfabric or UCX" ||
		fail "testpmd-cq --dev=sw loads $loaded"
	if [ -e "$plugins/tpcq-ofi.so" ]; then
		out=$(LD_DEBUG=files run_tpcq --dev=ofi:tcp --rate=2000 --duration=0.01 || true)
		if grep -Eq "file=libfabric\.so" <<<"$out"; then
			pass "control: testpmd-cq --dev=ofi:tcp loads libfabric, and the check sees it"
		else
			fail "control: testpmd-cq --dev=ofi:tcp loads no libfabric the check sees"
		fi
	fi
	if out=$(run_tpcq --dev=uring --rate=2000 --duration=0.1); then
		pass "installed testpmd-cq --dev=uring runs"
	elif grep -q '(io_uring disabled:' <<<"$out"; then
		echo "skip: installed testpmd-cq --dev=uring: the kernel refuses io_uring here"
	elif grep -q "unknown device 'uring'" <<<"$out"; then
		echo "skip: installed testpmd-cq --dev=uring: built without liburing"
	else
		echo "$out" | tail -20
		fail "installed testpmd-cq --dev=uring"
	fi
	# The kit's devices: run from an install with the kit; refused with
	# the reason, never a crash, from one without.
	emu_devs=$(run_tpcq --help | awk '$1 ~ /^(mlx5|verbs)-emu$/ { print $1 }' | tr '\n' ' ')
	for d in $emu_devs; do
		out=$(run_tpcq --dev="$d" --rate=2000 --duration=0.1) && rc=0 || rc=$?
		if [ "$emu" = install ]; then
			if [ $rc = 0 ] && grep -q 'lost_wakeups *: 0' <<<"$out"; then
				pass "installed testpmd-cq --dev=$d runs (the kit installed)"
			else
				echo "$out" | tail -20
				fail "installed testpmd-cq --dev=$d (the kit installed): exit $rc"
			fi
		elif [ $rc = 2 ] && grep -q 'the verification kit (-Demu=install) is not installed here' <<<"$out"; then
			pass "installed testpmd-cq --dev=$d without the kit: exit 2, $(grep -o 'the verification kit.*' <<<"$out" | head -1)"
		else
			echo "$out" | tail -20
			fail "installed testpmd-cq --dev=$d without the kit: exit $rc, not refused naming the kit"
		fi
	done
	[ -n "$emu_devs" ] || fail "testpmd-cq --help lists no emulated device"
	# The kit's faults and naive arm go with it too.
	# With the kit, the oracle counts the naive arm's losses (a race: three
	# tries, as the app suite's naive controls).
	for try in 1 2 3; do
		out=$(run_tpcq --dev=sw --arm=edge --transition=naive --fault-arm-delay=5000 \
			--rate=20000 --duration=0.3) && rc=0 || rc=$?
		[ "$emu" = install ] && [ $rc = 0 ] && ! grep -Eq 'lost_wakeups *: [1-9]' <<<"$out" ||
			break
	done
	if [ "$emu" = install ]; then
		if [ $rc = 0 ] && grep -Eq 'lost_wakeups *: [1-9]' <<<"$out"; then
			pass "installed testpmd-cq: the kit's naive control on sw loses wake-ups"
		else
			echo "$out" | tail -20
			fail "installed testpmd-cq: the kit's naive control on sw (exit $rc)"
		fi
	elif [ $rc = 2 ] && grep -q 'verification kit' <<<"$out"; then
		pass "installed testpmd-cq: sw faults and the naive arm refused without the kit"
	else
		echo "$out" | tail -20
		fail "installed testpmd-cq: sw faults without the kit: exit $rc"
	fi
	[ -x "$plugins/tpcq-plot.py" ] && [ ! -e "$root/bin/tpcq-plot.py" ] &&
		pass "tpcq-plot.py in $libdir/testpmd-cq, not in bin" ||
		fail "tpcq-plot.py not in $libdir/testpmd-cq, or in bin"
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

# Our .pc files point at the scratch prefix; the stacks' stay the system's.
mkdir "$tmp/pc"
for pc in "$lib"/pkgconfig/cqpoll*.pc; do
	sed "s|^prefix=.*|prefix=$root|" "$pc" >"$tmp/pc/$(basename "$pc")"
done
export PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

# 3. Static link through pkg-config --static.
if [ -f "$lib/pkgconfig/cqpoll_dpdk.pc" ] && [ -f "$lib/libcqpoll_dpdk.a" ]; then
	eal=(--no-huge -m 64 --no-pci --no-telemetry -l 0 --log-level=lib.eal:error
		--file-prefix="cqpoll-outside-$$")
	if ! cc -DALLOW_EXPERIMENTAL_API -o "$tmp/outside" "$src/test/package/outside_trace.c" \
		$(pkg-config --cflags cqpoll_dpdk) $(pkg-config --static --libs cqpoll_dpdk) \
		>"$tmp/link.log" 2>&1; then
		fail "static link through pkg-config --static: $(tail -5 "$tmp/link.log")"
	elif [ -n "$(needs_cqpoll "$tmp/outside")" ]; then
		fail "pkg-config --static --libs cqpoll_dpdk: the program needs $(needs_cqpoll "$tmp/outside")"
	elif out=$("$tmp/outside" "${eal[@]}" 2>&1); then
		pass "pkg-config --static link: $(echo "$out" | grep 'trace points')"
		# cqpoll_dpdk.pc brings libdpdk's archives once: the guide's
		# command names no libdpdk (naming it again would take them twice).
		n=$(pkg-config --static --libs cqpoll_dpdk | tr ' ' '\n' | grep -c 'librte_eal\.a' || true)
		[ "$n" = 1 ] && pass "pkg-config --static --libs cqpoll_dpdk takes librte_eal.a once" ||
			fail "pkg-config --static --libs cqpoll_dpdk takes librte_eal.a $n times"
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

# 4. Man pages and guides. man3 is shared by every package of a prefix:
# each installed page must be named by its own cqpoll_/CQPOLL_ name (or be
# cqpoll(3), the index) and take no name the system's man3 already has.
# man_check MAN3DIR: prints one line per bad page, returns their count.
man_check() {
	local dir=$1 n=0 page name sys
	sys=$(manpath 2>/dev/null | tr ':' '\n' | while read -r d; do
		ls "$d"/man3*/ 2>/dev/null
	done | sed 's/\.3[^.]*\(\.gz\)\?$//' | sort -u)
	for page in "$dir"/*; do
		name=$(basename "$page" .3)
		case $name in
		cqpoll | cqpoll.h | cqpoll_* | CQPOLL_*) ;;
		*) echo "page $name(3) is not named by a cqpoll_ name"; n=$((n + 1)) ;;
		esac
		if grep -qxF "$name" <<<"$sys"; then
			echo "page $name(3) collides with the system's man3"
			n=$((n + 1))
		fi
	done
	# With cqpoll's pages first on MANPATH, glibc's pages still answer.
	for name in free sleep error; do
		page=$(MANPATH="$(dirname "$dir"):$(manpath 2>/dev/null)" man -w 3 "$name" 2>/dev/null | head -1)
		case $page in
		"") echo "man -w 3 $name finds no page (devtools/install-deps.sh installs manpages-dev)"; n=$((n + 1)) ;;
		"$(dirname "$dir")"/*) echo "man -w 3 $name opens cqpoll's $page"; n=$((n + 1)) ;;
		esac
	done
	return $n
}
# dangling MAN3DIR: the cqpoll_*() and CQPOLL_* names its pages mention
# (headings aside) that have no page there. Not cqpoll's symbols: the
# version nodes (CQPOLL_0.5, CQPOLL_SDK_0.5) and the macro a program
# defines to use EXPERIMENTAL API.
dangling() {
	local dir=$1
	grep -hv '^\.S[HS]' "$dir"/*.3 | grep -oE '\bcqpoll_[a-z0-9_]+\(\)|\bCQPOLL_[A-Z0-9_]*[A-Z0-9]\b' |
		sed 's/()$//' | grep -vxE 'CQPOLL_([A-Z]+_)?[0-9]+|CQPOLL_ALLOW_EXPERIMENTAL_API' |
		LC_ALL=C sort -u | while read -r n; do
		[ -f "$dir/$n.3" ] || printf '%s ' "$n"
	done
}
if [ "$docs" = 1 ]; then
	man3=$root/share/man/man3
	if ! command -v man >/dev/null; then
		fail "man is not installed (devtools/install-deps.sh installs man-db)"
	elif [ ! -d "$man3" ]; then
		fail "no man3 pages installed"
	else
		if out=$(man_check "$man3"); then
			pass "$(ls "$man3" | wc -l) man3 pages, each named cqpoll_*, none in the system's man3; man -w 3 free sleep error: $(MANPATH="$root/share/man:$(manpath 2>/dev/null)" man -w 3 free sleep error | tr '\n' ' ')"
		else
			fail "man3: $out"
		fi
		# Negative control: a member page as doxygen's MAN_LINKS wrote them.
		mkdir -p "$tmp/man-ctl/man3"
		cp "$man3"/* "$tmp/man-ctl/man3/"
		printf '.so man3/cqpoll_sw.h.3\n' >"$tmp/man-ctl/man3/free.3"
		if out=$(man_check "$tmp/man-ctl/man3"); then
			fail "negative control (a free.3 among the pages) passed the man3 check: it cannot fail"
		else
			pass "negative control (a free.3 among the pages) caught: $(echo "$out" | tr '\n' ';')"
		fi
		page=$(MANPAGER=cat MANWIDTH=200 man -M "$root/share/man" cqpoll_poll_and_arm 2>/dev/null || true)
		if ! grep -q "Poll, and arm the CQ when it is empty" <<<"$page"; then
			fail "man cqpoll_poll_and_arm: no page, or not the function's documentation"
		elif ! grep -q "#include <cqpoll.h>" <<<"$page"; then
			fail "man cqpoll_poll_and_arm does not show #include <cqpoll.h>"
		elif grep -qE 'lib/cqpoll|drivers/|#include "' <<<"$page"; then
			fail "man cqpoll_poll_and_arm shows a source path: $(echo "$page" | grep -E 'lib/cqpoll|drivers/|#include "' | head -2)"
		elif ! head -1 <<<"$page" | grep -q "^cqpoll_poll_and_arm(3)"; then
			fail "man cqpoll_poll_and_arm is titled $(head -1 <<<"$page")"
		else
			pass "man cqpoll_poll_and_arm: titled cqpoll_poll_and_arm(3), #include <cqpoll.h>"
		fi
		if MANPAGER=cat man -M "$root/share/man" 3 CQPOLL_STATUS_SUCCESS 2>/dev/null |
			grep -q "enum cqpoll_status"; then
			pass "man CQPOLL_STATUS_SUCCESS opens enum cqpoll_status"
		else
			fail "man CQPOLL_STATUS_SUCCESS does not open enum cqpoll_status"
		fi
		# Complete: what a page names as a function (name()) or a constant
		# has a page of its own (control: a page naming an uninstalled
		# cqpoll_now_ns() and a CQPOLL_WC_WR_FLUSH_ERR that is no constant).
		if out=$(dangling "$man3") && [ -z "$out" ]; then
			pass "every cqpoll_*() and CQPOLL_* a page names has a page"
		else
			fail "pages name what has no page: $out"
		fi
		mkdir -p "$tmp/man-ref/man3"
		cp "$man3"/* "$tmp/man-ref/man3/"
		printf 'Compare with cqpoll_cq_set_wait().\nFlushed: CQPOLL_WC_WR_FLUSH_ERR.\n' \
			>>"$tmp/man-ref/man3/cqpoll_completion.h.3"
		out=$(dangling "$tmp/man-ref/man3")
		[ "$out" = "CQPOLL_WC_WR_FLUSH_ERR cqpoll_cq_set_wait " ] &&
			pass "negative control (a page naming cqpoll_cq_set_wait() and CQPOLL_WC_WR_FLUSH_ERR) caught" ||
			fail "negative control: the dangling names found were '$out'"
		# The header pages carry the file-level docs, and EXPERIMENTAL
		# functions say so (cqpoll_uring.h: all of it; the sched functions
		# by their version node).
		page=$(MANPAGER=cat MANWIDTH=200 man -M "$root/share/man" 3 cqpoll_uring.h 2>/dev/null || true)
		if grep -q "user_data to wr_id" <<<"$page" && grep -q "liburing.h first" <<<"$page"; then
			pass "man cqpoll_uring.h: the CQE mapping and the include order"
		elif [ -f "$lib/libcqpoll_uring.so" ]; then
			fail "man cqpoll_uring.h: no page, or without the header's own docs"
		fi
		for p in cqpoll_uring_cq_create cqpoll_sched_step cqpoll_group_adopt; do
			[ -f "$man3/$p.3" ] || continue
			if MANPAGER=cat man -M "$root/share/man" 3 "$p" 2>/dev/null |
				sed -n '/^STABILITY/,/^[A-Z]/p' | grep EXPERIMENTAL >/dev/null; then
				pass "man $p: STABILITY says EXPERIMENTAL"
			else
				fail "man $p: no EXPERIMENTAL mark"
			fi
		done
		if MANPAGER=cat man -M "$root/share/man" 3 cqpoll_poll_and_arm 2>/dev/null |
			grep -q '^STABILITY'; then
			fail "man cqpoll_poll_and_arm (stable) has an EXPERIMENTAL mark"
		else
			pass "man cqpoll_poll_and_arm: no EXPERIMENTAL mark (stable)"
		fi
	fi
else
	echo "skip: man pages (doxygen not found or -Ddocs=disabled)"
fi
# cqpoll(7) and the programs' pages open from the install with MANPATH at
# it, as "man 7 cqpoll" after a package install (control: without the
# install on MANPATH, man finds none of them).
if command -v man >/dev/null; then
	mp=$root/share/man
	pages=("7 cqpoll")
	[ -x "$root/bin/cqpoll-lab" ] && pages+=("1 cqpoll-lab")
	[ "$app_built" = 1 ] && pages+=("1 testpmd-cq" "1 tpcq-peer")
	for sp in "${pages[@]}"; do
		set -- $sp
		page=$(MANPATH="$mp" MANPAGER=cat MANWIDTH=200 man "$1" "$2" 2>/dev/null || true)
		where=$(MANPATH="$mp" man -w "$1" "$2" 2>/dev/null || true)
		case $where in
		"$mp"/*) ;;
		*) fail "man $1 $2 does not open the installed page (found: ${where:-none})"; continue ;;
		esac
		case $1$2 in
		7cqpoll) want='cqpoll_poll_and_arm' ;;
		1cqpoll-lab) want='--sim-sched' ;;
		1testpmd-cq) want='--dev=NAME' ;;
		1tpcq-peer) want='--peer=TRANSPORT-WAIT' ;;
		esac
		if ! grep -q "^$2($1)" <<<"$page"; then
			fail "man $1 $2 is titled $(head -1 <<<"$page")"
		elif ! grep -qF -- "$want" <<<"$page"; then
			fail "man $1 $2 does not mention $want"
		else
			pass "man $1 $2 opens from the install ($where)"
		fi
		if MANPATH="$tmp/no-man" man -w "$1" "$2" 2>/dev/null | grep -q "^$mp"; then
			fail "negative control: man $1 $2 found the install without it on MANPATH"
		fi
	done
	# Every installed program has its page.
	for prog in "$root"/bin/*; do
		[ -e "$prog" ] || continue
		name=$(basename "$prog")
		[ -f "$mp/man1/$name.1" ] && pass "bin/$name has its man1 page" ||
			fail "bin/$name is installed without a man1 page"
	done
else
	fail "man is not installed (devtools/install-deps.sh installs man-db)"
fi
for f in README.md CHANGELOG.md LICENSE doc/guides/contract.md doc/guides/packaging.md \
	results/lab-notes.md; do
	[ -f "$root/share/doc/cqpoll/$f" ] && pass "share/doc/cqpoll/$f" ||
		fail "share/doc/cqpoll/$f not installed"
done
# The license a distribution's copyright file quotes, with its notice.
if grep -q '^Copyright (c) [0-9]' "$root/share/doc/cqpoll/LICENSE" 2>/dev/null &&
	grep -q 'BSD 3-Clause' "$root/share/doc/cqpoll/LICENSE"; then
	pass "share/doc/cqpoll/LICENSE: BSD 3-Clause, $(grep -m1 '^Copyright' "$root/share/doc/cqpoll/LICENSE")"
else
	fail "share/doc/cqpoll/LICENSE: no BSD 3-Clause text with a copyright notice"
fi
# Only what a reader reads: guides and their figures (and LICENSE), no lab
# or sweep data.
doc_data() {
	find "$1" -type f ! -name '*.md' ! -name '*.png' ! -path "$1/LICENSE" | sort
}
data=$(doc_data "$root/share/doc/cqpoll")
if [ -z "$data" ]; then
	pass "share/doc/cqpoll: $(find "$root/share/doc/cqpoll" -type f | wc -l) files, only .md and .png"
else
	fail "share/doc/cqpoll carries data no reader reads: $(echo "$data" | wc -l) files, e.g. $(echo "$data" | head -3 | tr '\n' ' ')"
fi
# Installed links resolve: every symbolic link of the install, and every
# relative link of the installed Markdown (installed as laid out in the
# tree, README and CHANGELOG beside doc/guides/ and results/).
# md_links DIR: prints each Markdown file with its links that lead nowhere.
md_links() {
	python3 - "$1" <<'EOP'
import os, re, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in sorted(fs):
        if not f.endswith('.md'):
            continue
        p = os.path.join(d, f)
        text = re.sub(r'```.*?```', '', open(p, encoding='utf-8').read(), flags=re.S)
        bad = sorted({t for t in (m.group(1).split('#')[0] for m in
                                  re.finditer(r'\]\(([^)\s]+)\)', text))
                      if t and not re.match(r'[a-z]+:', t) and
                      not os.path.exists(os.path.join(d, t))})
        if bad:
            print('%s: %d (%s)' % (os.path.relpath(p, sys.argv[1]), len(bad), ' '.join(bad[:3])))
EOP
}
broken=$(find "$tmp/root" -type l ! -exec test -e {} \; -print | sed "s|^$tmp/root||")
nlinks=$(find "$tmp/root" -type l | wc -l)
[ -z "$broken" ] && pass "$nlinks symbolic links, each resolves" ||
	fail "symbolic links that lead nowhere: $(echo $broken)"
out=$(md_links "$root/share/doc/cqpoll")
[ -z "$out" ] && pass "share/doc/cqpoll: every relative Markdown link resolves" ||
	fail "share/doc/cqpoll: Markdown links that lead nowhere: $(echo $out)"
empty=$(find "$tmp/root" -type d -empty | sed "s|^$tmp/root||")
[ -z "$empty" ] && pass "no empty directory installed" || fail "empty directories installed: $empty"
# Negative controls: the README installed without the guides beside it,
# and a link to nothing.
mkdir "$tmp/md-ctl"
cp "$src/README.md" "$tmp/md-ctl/"
ln -s libcqpoll.so.9 "$tmp/root/ctl-link"
out=$(md_links "$tmp/md-ctl")
[ -n "$out" ] && pass "negative control (the README without the guides) caught: $out" ||
	fail "negative control (the README without the guides) passed: the check cannot fail"
[ -n "$(find "$tmp/root" -type l ! -exec test -e {} \; -print)" ] &&
	pass "negative control (a link to nothing) caught" ||
	fail "negative control (a link to nothing) passed: the check cannot fail"
rm "$tmp/root/ctl-link"

# Negative control: the results' directory as it was installed whole.
cp -r "$root/share/doc/cqpoll" "$tmp/doc-ctl"
cp -r "$src/results" "$tmp/doc-ctl/"
data=$(doc_data "$tmp/doc-ctl")
[ -n "$data" ] && pass "negative control (the results' directory installed whole) caught: $(echo "$data" | wc -l) data files" ||
	fail "negative control (the results' directory installed whole) passed: the check cannot fail"

# 6. The examples' sources, built as a user builds them: their Makefile
# against the installed libraries (pkg-config cqpoll_dpdk), and run (its
# static link is the one of section 3).
if [ -f "$lib/pkgconfig/cqpoll_dpdk.pc" ]; then
	ex=$root/share/cqpoll/examples/cq_echo
	if [ ! -f "$ex/main.c" ] || [ ! -f "$ex/Makefile" ]; then
		fail "examples/cq_echo not installed in share/cqpoll/examples"
	else
		cp -r "$ex" "$tmp/cq_echo"
		if ! make -C "$tmp/cq_echo" shared >"$tmp/cq_echo.log" 2>&1; then
			fail "make in the installed examples/cq_echo: $(tail -5 "$tmp/cq_echo.log")"
		elif out=$(LD_LIBRARY_PATH="$lib" "$tmp/cq_echo/build/cqpoll-cq-echo-shared" \
			--no-huge -m 256 --no-pci --no-shconf -l 0-1 --no-telemetry \
			--log-level=lib.vhost.*:error --log-level=pmd.net.*:error \
			--file-prefix="cqpoll-cq-echo-$$" -- --rounds=20 --gap-us=200 2>&1); then
			pass "installed examples/cq_echo builds (make) and runs: $(echo "$out" | grep -m1 echoed)"
		else
			fail "installed examples/cq_echo: $(echo "$out" | tail -3)"
		fi
	fi
fi

# 5. The drivers do not drag their stacks. The stack libraries are what the
# installed driver libraries load beyond what libcqpoll loads.
sonames() {
	LD_LIBRARY_PATH="$lib" ldd "$1" | awk '$2 == "=>" { print $1 }' | sort -u
}
sonames "$(ls "$lib"/libcqpoll.so.* | head -1)" >"$tmp/core.libs"
# The stacks by name too: libcqpoll itself must need none of them (else the
# difference below would not hide them).
stack_re='^lib(ibverbs|mlx5|uring|fabric|ucp|ucs|uct|ucm)\.so'
found=$(grep -E "$stack_re" "$tmp/core.libs" || true)
[ -z "$found" ] && pass "libcqpoll needs no stack library ($(tr '\n' ' ' <"$tmp/core.libs"))" ||
	fail "libcqpoll needs stack libraries: $(echo $found)"
: >"$tmp/stack.libs"
drvlibs=()
for so in "$lib"/libcqpoll_ibv.so "$lib"/libcqpoll_uring.so "$lib"/libcqpoll_ofi.so \
	"$lib"/libcqpoll_ucx.so; do
	[ -e "$so" ] || continue
	drvlibs+=("$(basename "$so" .so)")
	sonames "$so" | grep -v '^libcqpoll' | comm -23 - "$tmp/core.libs" >>"$tmp/stack.libs"
done
sort -u -o "$tmp/stack.libs" "$tmp/stack.libs"
if [ ${#drvlibs[@]} -eq 0 ]; then
	echo "skip: no driver library in this build (no stack to hide)"
else
	echo "stack libraries hidden: $(tr '\n' ' ' <"$tmp/stack.libs")"
fi
hidden=$tmp/hidden
mkdir "$hidden"
cp -a "$lib"/*.so* "$hidden"/
while read -r so; do
	cc -shared -fPIC -DPOISON_NAME="\"$so\"" -Wl,-soname,"$so" -o "$hidden/$so" \
		"$src/test/package/poison.c"
done <"$tmp/stack.libs"
# run NAME PROGRAM: ldd names no stack library, and the program runs.
run_hidden() {
	local what=$1 prog=$2 found out
	found=$(LD_LIBRARY_PATH="$hidden" ldd "$prog" | awk '{ print $1 }' | grep -Fxf "$tmp/stack.libs" || true)
	if [ -n "$found" ]; then
		fail "$what: ldd shows stack libraries: $(echo $found)"
	elif out=$(LD_LIBRARY_PATH="$hidden" "$prog" 2>&1); then
		pass "$what runs with the stacks hidden: $out"
	else
		fail "$what with the stacks hidden: $out"
	fi
}
if cc -o "$tmp/outside-sw" "$src/test/package/outside_sw.c" \
	$(pkg-config --cflags --libs cqpoll) >"$tmp/link-sw.log" 2>&1; then
	run_hidden "pkg-config --libs cqpoll (shared)" "$tmp/outside-sw"
else
	fail "pkg-config --libs cqpoll: $(tail -5 "$tmp/link-sw.log")"
fi
if cc -o "$tmp/outside-sw-static" "$src/test/package/outside_sw.c" \
	$(pkg-config --cflags cqpoll) $(pkg-config --static --libs cqpoll) \
	>"$tmp/link-sw-static.log" 2>&1; then
	if [ -n "$(needs_cqpoll "$tmp/outside-sw-static")" ]; then
		fail "pkg-config --static --libs cqpoll: the program needs $(needs_cqpoll "$tmp/outside-sw-static")"
	else
		run_hidden "pkg-config --static --libs cqpoll" "$tmp/outside-sw-static"
	fi
else
	fail "pkg-config --static --libs cqpoll: $(tail -5 "$tmp/link-sw-static.log")"
fi
# Negative control: a libcqpoll that needs a stack, as before the drivers
# moved out (the sw program linked also against a driver library, kept
# with --no-as-needed), must fail with the stacks hidden.
if [ ${#drvlibs[@]} -gt 0 ]; then
	ctl=${drvlibs[0]#lib}
	cc -o "$tmp/outside-sw-ctl" "$src/test/package/outside_sw.c" -Wl,--no-as-needed \
		$(pkg-config --cflags --libs "$ctl" cqpoll) >"$tmp/link-ctl.log" 2>&1 ||
		fail "negative control did not link: $(tail -5 "$tmp/link-ctl.log")"
	if out=$(LD_LIBRARY_PATH="$hidden" "$tmp/outside-sw-ctl" 2>&1); then
		fail "negative control (linked against lib$ctl) ran with the stacks hidden: the check cannot fail"
	else
		pass "negative control (linked against lib$ctl) fails with the stacks hidden: $(echo "$out" | tail -1)"
	fi
fi
# Each driver library from outside, through its own .pc, with its stack.
for d in "${drvlibs[@]}"; do
	pc=${d#lib}
	case $pc in
	# It calls liburing itself, so it names liburing too.
	cqpoll_uring) prog=$src/test/package/outside_uring.c pc="cqpoll_uring liburing" ;;
	*)
		prog=$tmp/outside_$pc.c
		case $pc in
		cqpoll_ibv) printf '#include <cqpoll_verbs.h>\n#define CALL cqpoll_cq_from_ibv(NULL, NULL, NULL)\n' ;;
		cqpoll_ofi) printf '#include <cqpoll_ofi.h>\n#define CALL cqpoll_ofi_cq_open(NULL, NULL, NULL)\n' ;;
		cqpoll_ucx) printf '#include <cqpoll_ucx.h>\n#define CALL cqpoll_ucx_cq_create(NULL, NULL)\n' ;;
		esac >"$prog"
		cat >>"$prog" <<'EOC'
#include <errno.h>
#include <stdio.h>
/* The driver's entry point, resolved and refusing bad input as documented. */
int main(void)
{
	if (CALL != NULL || errno != EINVAL)
		return 1;
	printf("refuses NULL with EINVAL\n");
	return 0;
}
EOC
		;;
	esac
	# static-no-as-needed: as a toolchain whose linker does not default to
	# --as-needed (Debian's gcc does), so the .pc must give it itself.
	for mode in shared static static-no-as-needed; do
		pre=()
		case $mode in
		static) flags=$(pkg-config --static --libs $pc) ;;
		static-no-as-needed) flags=$(pkg-config --static --libs $pc) pre=(-Wl,--no-as-needed) ;;
		*) flags=$(pkg-config --libs $pc) ;;
		esac
		if ! cc -o "$tmp/outside-$d-$mode" "$prog" $(pkg-config --cflags $pc) "${pre[@]}" $flags \
			>"$tmp/link-$d.log" 2>&1; then
			fail "pkg-config $([ "$mode" != shared ] && echo '--static ')--libs $pc ($mode): $(tail -5 "$tmp/link-$d.log")"
			continue
		fi
		needs=$(needs_cqpoll "$tmp/outside-$d-$mode")
		if [ "$mode" = shared ]; then
			grep -q "${d}\.so" <<<"$needs" || fail "pkg-config --libs $pc: the program does not need $d.so ($needs)"
		elif [ -n "$needs" ]; then
			fail "pkg-config --static --libs $pc ($mode): the program needs $needs"
			continue
		else
			pass "pkg-config --static --libs $pc ($mode): no libcqpoll* NEEDED"
		fi
		out=$(LD_LIBRARY_PATH="$lib" "$tmp/outside-$d-$mode" 2>&1) && rc=0 || rc=$?
		if [ "$rc" -eq 0 ]; then
			pass "$pc ($mode) with its stack: $out"
		elif [ "$rc" -eq 77 ]; then
			echo "skip: $pc ($mode): $out"
		else
			fail "$pc ($mode) with its stack (exit $rc): $out"
		fi
	done
done

# Negative control: a driver's .pc requiring its -libs.pc before cqpoll.pc
# (as they were) puts -lNAME -lcqpoll ahead of libcqpoll.a: the NEEDED check
# above must catch the program's libcqpoll.so.
if [ ${#drvlibs[@]} -gt 0 ]; then
	ctl=${drvlibs[0]#lib}
	cp -r "$tmp/pc" "$tmp/pc-old"
	sed -i "s/^Requires: cqpoll, $ctl-libs\$/Requires: $ctl-libs, cqpoll/" "$tmp/pc-old/$ctl.pc"
	if ! grep -q "^Requires: $ctl-libs, cqpoll\$" "$tmp/pc-old/$ctl.pc"; then
		fail "negative control: $ctl.pc has no 'Requires: cqpoll, $ctl-libs' line to reorder"
	elif ! cc -o "$tmp/outside-old-pc" "$src/test/package/outside_sw.c" \
		$(PKG_CONFIG_PATH="$tmp/pc-old:$PKG_CONFIG_PATH" pkg-config --cflags --static --libs "$ctl") \
		>"$tmp/link-old.log" 2>&1; then
		fail "negative control (the old $ctl.pc) did not link: $(tail -5 "$tmp/link-old.log")"
	elif needs=$(needs_cqpoll "$tmp/outside-old-pc") && [ -n "$needs" ]; then
		pass "negative control (the old $ctl.pc: -libs before cqpoll) caught: needs $needs"
	else
		fail "negative control (the old $ctl.pc) needs no libcqpoll: the check cannot fail"
	fi
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "install: every check passed"
