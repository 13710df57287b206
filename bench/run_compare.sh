#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per completion of the verbs path (verbs driver on verbs-emu,
# provider callbacks included) against the mlx5 direct path (mlx5 driver on
# mlx5-emu), at bursts 1, 8, 32, in one run. Counted by callgrind inside each
# driver's burst function, so the harness loop is not counted; taken as the
# difference between a run of N and of 2N completions, so that set-up and
# warm-up cancel out.
# Usage: bench/run_compare.sh [build-dir]   (default build)
set -eu
b=${1:-build}/bench
count() { # count FUNCTION-GLOB COMMAND...: instructions collected in FUNCTION
	f=$1
	shift
	out=$(mktemp)
	valgrind --tool=callgrind --toggle-collect="$f" --callgrind-out-file="$out" \
		"$@" >/dev/null 2>&1
	sed -n 's/^summary: //p' "$out"
	rm -f "$out"
}
rounds=5
cqes=$((rounds * 4096))
printf '%-6s %14s %14s %14s %8s\n' burst verbs-ex-ts verbs-poll-cq mlx5-direct ratio
for burst in 1 8 32; do
	m1=$(count 'cqpoll_mlx5_poll_*' "$b/bench_mlx5_poll" driver $burst $rounds)
	m2=$(count 'cqpoll_mlx5_poll_*' "$b/bench_mlx5_poll" driver $burst $((2 * rounds)))
	e1=$(count 'cqpoll_verbs_poll_*' "$b/bench_verbs" --variant=ex-ts --burst=$burst --completions=$cqes)
	e2=$(count 'cqpoll_verbs_poll_*' "$b/bench_verbs" --variant=ex-ts --burst=$burst --completions=$((2 * cqes)))
	w1=$(count 'cqpoll_verbs_poll_*' "$b/bench_verbs" --variant=wc --burst=$burst --completions=$cqes)
	w2=$(count 'cqpoll_verbs_poll_*' "$b/bench_verbs" --variant=wc --burst=$burst --completions=$((2 * cqes)))
	awk -v b=$burst -v n=$cqes -v m1="$m1" -v m2="$m2" -v e1="$e1" -v e2="$e2" \
	    -v w1="$w1" -v w2="$w2" 'BEGIN {
		m = (m2 - m1) / n; e = (e2 - e1) / n; w = (w2 - w1) / n
		best = e < w ? e : w
		printf "%-6d %14.1f %14.1f %14.1f %7.2fx\n", b, e, w, m, best / m
	}'
done
echo "ratio: the cheaper verbs variant over the mlx5 direct path (goal >= 3x)"
