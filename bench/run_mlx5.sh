#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The mlx5 direct poll against DPDK's floor loop, in one run:
#   1. cycles per CQE (rdtsc, median of rounds, every variant interleaved in
#      one process) at bursts 1, 8, 32, and the empty-poll cost;
#   2. instructions per CQE (callgrind, repeatable whatever the machine is
#      doing) of the same variants.
# Usage: bench/run_mlx5.sh [build-dir]   (default build)
set -e
b=${1:-build}/bench/bench_mlx5_poll
rounds=5
cqes=$((rounds * 4096))
"$b" 21
echo
for burst in 1 8 32; do
	for mode in floor driver floor-lfence; do
		out=$(mktemp)
		valgrind --tool=callgrind --toggle-collect='bench_measure*' \
			--callgrind-out-file="$out" "$b" $mode $burst $rounds >/dev/null 2>&1
		ir=$(sed -n 's/^summary: //p' "$out")
		rm -f "$out"
		printf '%-12s burst=%-2s instr/CQE=%6.2f\n' $mode $burst \
			"$(echo "$ir / $cqes" | bc -l)"
		eval "ir_$(echo $mode | tr - _)_$burst=$ir"
	done
	eval "r=\$(echo \"\$ir_driver_$burst / \$ir_floor_$burst\" | bc -l)"
	printf 'burst=%-2s driver/floor instructions = %.3f\n' $burst "$r"
done
for mode in empty empty-floor; do
	out=$(mktemp)
	valgrind --tool=callgrind --toggle-collect='bench_measure*' \
		--callgrind-out-file="$out" "$b" $mode 32 $rounds >/dev/null 2>&1
	ir=$(sed -n 's/^summary: //p' "$out")
	rm -f "$out"
	printf '%-12s instr/call=%.2f (the bench loop included)\n' $mode \
		"$(echo "$ir / ($rounds * 1048576)" | bc -l)"
done
