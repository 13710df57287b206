#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Compare the ABI of the built shared libraries with the baseline kept in
# abi/ (doc/guides/abi.md), with libabigail's abidw and abidiff as DPDK's
# devtools/check-abi.sh does: any change to an exported function, or to a
# type it reaches from the installed headers, fails; added functions and the
# EXPERIMENTAL and INTERNAL nodes do not (devtools/libabigail.abignore).
#
# usage: devtools/check-abi.sh BUILDDIR            check
#        devtools/check-abi.sh --update BUILDDIR   write the baseline
#        devtools/check-abi.sh --control BUILDDIR  negative control
#
# A deliberate break is announced by bumping ABI_VERSION and writing the new
# baseline with --update in the same commit.
#
# --control builds libcqpoll again from a copy of the tree in which two
# fields of struct cqpoll_cq_fp (the data inline code reads) are swapped, and
# succeeds only if the check then fails and names that structure: the check
# must see what an application compiled against the old header would break on.
#
# BUILDDIR must be a normal (unsanitized) build with the default options and
# every optional driver found, as the baseline was taken from one (CI's).
set -euo pipefail

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
libs=(libcqpoll libcqpoll_dpdk libcqpoll_ibv libcqpoll_uring libcqpoll_ofi libcqpoll_ucx)
mode=check
case "${1:-}" in
--update) mode=update; shift ;;
--control) mode=control; shift ;;
esac
if [ $# -ne 1 ]; then
    echo "usage: $0 [--update | --control] BUILDDIR" >&2
    exit 2
fi
builddir=$(cd "$1" && pwd)
for tool in abidw abidiff; do
    if ! command -v "$tool" > /dev/null; then
        echo "check-abi: $tool not found (Debian: apt-get install abigail-tools)" >&2
        exit 2
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# dump BUILDDIR OUTDIR: abidw of each library, restricted to the types of
# the headers that an install of BUILDDIR puts in include/cqpoll (without the
# verification kit's).
dump() {
    local b=$1 out=$2 lib path
    mkdir -p "$out/include"
    meson introspect "$b" --installed > "$out/installed.json"
    python3 - "$out/installed.json" "$out/include" <<'EOF'
import json, os, shutil, sys
installed = json.load(open(sys.argv[1]))
for src, dst in installed.items():
    if '/include/cqpoll/' in dst and '/emu/' not in src:
        shutil.copy(src, sys.argv[2])
EOF
    for lib in "${libs[@]}"; do
        path=$(python3 - "$out/installed.json" "$lib" <<'EOF'
import json, re, sys
for src in json.load(open(sys.argv[1])):
    if re.search(r'/%s\.so\.[0-9.]+$' % re.escape(sys.argv[2]), src):
        print(src)
EOF
)
        if [ -z "$path" ]; then
            echo "check-abi: $lib is not built in $b" >&2
            return 1
        fi
        abidw --headers-dir "$out/include" --drop-private-types --no-corpus-path \
            --out-file "$out/$lib.abi" "$path"
    done
}

# compare DUMPDIR: abidiff of the baseline against DUMPDIR; the report goes
# to DUMPDIR/report.txt.
compare() {
    local out=$1 lib rc=0
    : > "$out/report.txt"
    for lib in "${libs[@]}"; do
        if [ ! -f "$topdir/abi/$lib.abi" ]; then
            echo "check-abi: no baseline abi/$lib.abi (write it with --update)" >> "$out/report.txt"
            rc=1
            continue
        fi
        if ! abidiff --suppr "$topdir/devtools/libabigail.abignore" \
            --no-added-syms "$topdir/abi/$lib.abi" "$out/$lib.abi" \
            >> "$out/report.txt" 2>&1; then
            echo "check-abi: $lib: ABI differs from abi/$lib.abi" >> "$out/report.txt"
            rc=1
        fi
    done
    return $rc
}

case $mode in
update)
    dump "$builddir" "$work/new"
    mkdir -p "$topdir/abi"
    for lib in "${libs[@]}"; do
        cp "$work/new/$lib.abi" "$topdir/abi/$lib.abi"
        echo "check-abi: wrote abi/$lib.abi"
    done
    ;;
check)
    dump "$builddir" "$work/new"
    if compare "$work/new"; then
        echo "check-abi: ${libs[*]} match the baseline in abi/"
    else
        cat "$work/new/report.txt"
        echo "check-abi: FAILED. An intended break: bump ABI_VERSION and run" \
            "devtools/check-abi.sh --update BUILDDIR (doc/guides/abi.md)." >&2
        exit 1
    fi
    ;;
control)
    # The same configuration as BUILDDIR, from a copy of the tree with the
    # swap, building only what is compared.
    (cd "$topdir" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 cp --parents -t "$work")
    hdr="$work/lib/cqpoll/cqpoll_fp.h"
    python3 - "$hdr" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
a = re.search(r'^\tcqpoll_poll_burst_t poll;.*\n', s, re.M)
b = re.search(r'^\tvoid \*priv;.*\n', s, re.M)
if not a or not b or b.start() != a.end():
    sys.exit('check-abi: cannot find the poll and priv fields to swap in ' + p)
s = s[:a.start()] + b.group(0) + a.group(0) + s[b.end():]
open(p, 'w').write(s)
EOF
    opts=$(meson introspect "$builddir" --buildoptions | python3 -c '
import json, sys
for o in json.load(sys.stdin):
    if o["section"] == "user":
        v = o["value"]
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, list):
            v = ",".join(v)
        print("-D%s=%s" % (o["name"], v))
')
    # shellcheck disable=SC2086
    meson setup "$work/build" "$work" $opts > "$work/setup.log" 2>&1 ||
        { cat "$work/setup.log"; exit 1; }
    # shellcheck disable=SC2046
    meson compile -C "$work/build" $(printf '%s:shared_library ' "${libs[@]#lib}") \
        > "$work/ninja.log" 2>&1 ||
        { tail -30 "$work/ninja.log"; exit 1; }
    dump "$work/build" "$work/new"
    if compare "$work/new"; then
        echo "check-abi: control FAILED: swapping poll and priv in struct cqpoll_cq_fp went unnoticed" >&2
        exit 1
    fi
    if ! grep -q "cqpoll_cq_fp" "$work/new/report.txt"; then
        cat "$work/new/report.txt"
        echo "check-abi: control FAILED: the check failed, but not on struct cqpoll_cq_fp" >&2
        exit 1
    fi
    cat "$work/new/report.txt"
    echo "check-abi: control OK: the swapped fast-path fields fail the check"
    ;;
esac
