#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per poll-group iteration (cqpoll_group_run_once(), the
# callbacks included), with libcqpoll and with the test-only library without
# the periodic health check (-DCQPOLL_MUTANT_NO_HEALTH_CHECK): what that
# check adds to the loop; then, on a virtual clock, what adaptive mode (the
# adaptive policy's bookkeeping) adds over busy mode, per iteration and per
# completion (issue 36). Counted by callgrind inside cqpoll_group_run_once,
# as the difference between runs of N and 2N iterations, so that set-up
# cancels out; repeatable whatever the machine is doing.
# Usage: bench/run_group_iter.sh [build-dir]   (default build)
set -eu
b=${1:-build}/bench
count() { # count COMMAND...: instructions inside cqpoll_group_run_once
	out=$(mktemp)
	valgrind --tool=callgrind --toggle-collect='cqpoll_group_run_once' \
		--callgrind-out-file="$out" "$@" >/dev/null 2>&1
	sed -n 's/^summary: //p' "$out"
	rm -f "$out"
}
n=20000
printf '%-26s %14s %14s\n' case libcqpoll no-health-check
for args in "8" "8 --traffic" "8 --cold" "8 --cold --traffic" "64 --traffic"; do
	cqs=${args%% *}
	flags=""
	[ "$cqs" = "$args" ] || flags=${args#* }
	res=""
	for exe in bench_group_iter bench_group_iter_no_health; do
		# shellcheck disable=SC2086
		i1=$(count "$b/$exe" "$cqs" $n $flags)
		# shellcheck disable=SC2086
		i2=$(count "$b/$exe" "$cqs" $((2 * n)) $flags)
		res="$res $(echo "$i1 $i2 $n" | awk '{ printf "%.2f", ($2 - $1) / $3 }')"
	done
	# shellcheck disable=SC2086
	printf '%-26s %14s %14s\n' "$args" $res
done

# What the adaptive policy adds to an iteration over busy mode, one CQ, on
# the virtual clock of bench_group_iter_vclock (counts repeat exactly):
# a completion every 12 iterations (a ~1.2 us ping-pong, where the policy
# polls through every silence) and one at every iteration.
printf '\n%-26s %14s %14s %14s\n' "1 cq, virtual clock" busy adaptive "per completion"
for every in 12 1; do
	res=""
	for pol in "" "--policy=adaptive"; do
		# shellcheck disable=SC2086
		i1=$(count "$b/bench_group_iter_vclock" 1 $n --every=$every $pol)
		# shellcheck disable=SC2086
		i2=$(count "$b/bench_group_iter_vclock" 1 $((2 * n)) --every=$every $pol)
		res="$res $(echo "$i1 $i2 $n" | awk '{ printf "%.2f", ($2 - $1) / $3 }')"
	done
	# shellcheck disable=SC2086
	printf '%-26s %14s %14s %14s\n' "--every=$every" $res \
		"$(echo $res $every | awk '{ printf "+%.0f", ($2 - $1) * $3 }')"
done
