#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# One sleep-and-wake on an io_uring CQ, by each way of waiting
# (bench/bench_sleep_path.c): user-space instructions a cycle (callgrind,
# repeatable whatever the machine does) and system calls a cycle (strace).
# Usage: bench/run_sleep_path.sh [build-dir] [cycles] [delay-us]
#        (default build, 1000, 200; adaptive polls through gaps as short as
#        200 us, so its sleep path is measured at 1000)
set -e
b=${1:-build}
n=${2:-1000}
us=${3:-200}
exe=$b/bench/bench_sleep_path
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-8s %14s %12s  %s\n' way instr/cycle syscalls/cycle 'system calls (count/cycles)'
for w in wait wait-to api group adaptive; do
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$w" \
		--toggle-collect=consume_cycle "$exe" "$w" "$n" "$us" >/dev/null 2>"$tmp/vg.$w"
	ir=$(sed -n 's/^summary: *//p' "$tmp/cg.$w")
	strace -f -c -o "$tmp/st.$w" "$exe" "$w" "$n" "$us" >/dev/null
	# Every call but the set-up's (one ring, the group): those of the cycles.
	calls=$(awk -v n="$n" '$NF ~ /^[a-z_0-9]+$/ && $NF != "total" && $4 ~ /^[0-9]+$/ && $4 >= n / 20 {
		t += $4; s = s sprintf("%s %.2f ", $NF, $4 / n) } END { printf "%.2f|%s", t / n, s }' "$tmp/st.$w")
	printf '%-8s %14.1f %12s  %s\n' "$w" "$(echo "$ir / $n" | bc -l)" \
		"${calls%%|*}" "${calls#*|}"
done
