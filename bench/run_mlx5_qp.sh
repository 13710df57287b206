#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# cqpoll's own mlx5 QP against DPDK's Tx path (post and completion of a
# request), in one run:
#   1. cycles per request (rdtsc, median of rounds, all interleaved in one
#      process) at bursts 1 and 32;
#   2. instructions per request (callgrind, repeatable whatever the machine
#      is doing) of the same.
# Three sides: cqpoll's general post (driver: cqpoll_mlx5_qp_post_send()),
# cqpoll's fixed route (route: cqpoll_mlx5_qp_post_burst(), the QP's one
# opcode set at creation, one entry), and the floor (DPDK's Tx path on the
# rings). All signal one request in N (DPDK's completion moderation,
# MLX5_TX_COMP_THRESH = 32 by default) and poll their CQ once per burst.
# The emulated device's work between the post and the poll is left out.
# Usage: bench/run_mlx5_qp.sh [build-dir] [rounds] [N]   (default build, 21, 32)
set -e
b=${1:-build}/bench/bench_mlx5_qp
rounds=${2:-21}
n=${3:-32}
"$b" "$rounds" "$n"
echo
echo "callgrind: one signalled request per $n, one CQ poll per burst, every side"
for burst in 1 32; do
	for mode in floor driver route; do
		out=$(mktemp)
		valgrind --tool=callgrind --toggle-collect='bench_measure*' \
			--callgrind-out-file="$out" "$b" $mode $burst 5 "$n" >/dev/null 2>&1
		ir=$(sed -n 's/^summary: //p' "$out")
		rm -f "$out"
		printf '%-7s burst=%-2s instr/req=%6.2f\n' $mode $burst \
			"$(echo "$ir / (5 * 1024)" | bc -l)"
		eval "ir_${mode}_$burst=$ir"
	done
	for mode in driver route; do
		eval "r=\$(echo \"\$ir_${mode}_$burst / \$ir_floor_$burst\" | bc -l)"
		printf 'burst=%-2s %s/floor instructions = %.3f\n' $burst $mode "$r"
	done
done
