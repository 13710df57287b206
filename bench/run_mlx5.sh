#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Instructions (callgrind, repeatable) and cycles (rdtsc, noisy) per CQE of
# the mlx5 direct poll against the hand-written floor, at bursts 1, 8, 32.
# Usage: bench/run_mlx5.sh [build-dir]   (default build-mlx5)
set -e
b=${1:-build-mlx5}/bench/bench_mlx5_poll
rounds=5
cqes=$((rounds * 4096))
for burst in 1 8 32; do
	for mode in floor driver; do
		out=$(mktemp)
		valgrind --tool=callgrind --toggle-collect='bench_measure*' \
			--callgrind-out-file="$out" "$b" $mode $burst $rounds >/dev/null 2>&1
		ir=$(sed -n 's/^summary: //p' "$out")
		rm -f "$out"
		cyc=$("$b" $mode $burst 50 | sed 's/.*cycles\/cqe=\([0-9.]*\).*/\1/')
		printf '%-6s burst=%-2s instr/cqe=%6.2f cycles/cqe=%s\n' $mode $burst \
			"$(echo "$ir / $cqes" | bc -l)" "$cyc"
		eval "ir_${mode}_$burst=$ir"
	done
	eval "r=\$(echo \"\$ir_driver_$burst / \$ir_floor_$burst\" | bc -l)"
	printf 'burst=%-2s driver/floor instructions = %.3f\n' $burst "$r"
done
