#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What one sleep-and-wake touches in user space, by way of waiting
# (bench/bench_sleep_path.c): the distinct 64-byte lines and 4 KiB pages of
# code and of data a cycle reads or writes. A sleep gives the CPU to others
# (on a VM, to other guests too), so what the wake-up touches comes back
# cold: lines are the cache misses a cycle can take, pages its TLB misses.
# Counted with valgrind's lackey (every instruction fetch and data access),
# per cycle from consume_cycle()'s entry to the next produce()'s, the median
# over the cycles after the first ten: repeatable whatever the machine does.
# Usage: bench/run_sleep_lines.sh [build-dir] [cycles] [delay-us] [way...]
#        (default build, 100, 1000, every way)
set -e
b=${1:-build}
n=${2:-100}
us=${3:-1000}
[ $# -gt 3 ] && shift 3 || set --
ways=${*:-wait wait-to api group adaptive}
exe=$b/bench/bench_sleep_path
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# valgrind loads a position-independent program at 0x108000.
base=0x108000
sym() {
	nm "$exe" | awk -v s="$1" '$3 == s { print $1 }'
}
c=$(sym consume_cycle)
p=$(sym produce)
[ -n "$c" ] && [ -n "$p" ] || { echo "run_sleep_lines: no consume_cycle or produce in $exe" >&2; exit 1; }
printf '%-8s %12s %12s %12s %12s\n' way code_lines data_lines code_pages data_pages
for w in $ways; do
	valgrind --tool=lackey --trace-mem=yes --basic-counts=no \
		--log-file="$tmp/lk.$w" "$exe" "$w" "$n" "$us" >/dev/null
	python3 - "$tmp/lk.$w" "$w" "$base" "$c" "$p" "$n" <<'EOF'
import statistics, sys

path, way, base = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
enter, leave = base + int(sys.argv[4], 16), base + int(sys.argv[5], 16)
cycles = []
cur = None
with open(path) as f:
    for line in f:
        kind, _, rest = line.strip().partition(" ")
        if kind not in ("I", "L", "S", "M"):
            continue
        addr = int(rest.strip().split(",")[0], 16)
        if kind == "I" and addr == enter:
            cur = (set(), set())
        elif kind == "I" and addr == leave and cur is not None:
            cycles.append(cur)
            cur = None
        if cur is not None:
            cur[0 if kind == "I" else 1].add(addr >> 6)
if cur is not None:
    cycles.append(cur)
if len(cycles) != int(sys.argv[6]):
    sys.exit("run_sleep_lines: %s: %d cycles found in the trace, not %s "
             "(the program's load address is not %#x?)" % (way, len(cycles),
                                                         sys.argv[6], base))
steady = cycles[10:] or cycles
med = lambda xs: statistics.median(xs)
print("%-8s %12.0f %12.0f %12.0f %12.0f" % (
    way, med([len(c) for c, d in steady]), med([len(d) for c, d in steady]),
    med([len({x >> 6 for x in c}) for c, d in steady]),
    med([len({x >> 6 for x in d}) for c, d in steady])))
EOF
done
