#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build the mlx5 CQE decoder fuzz target with clang (libFuzzer, ASan, UBSan)
# and run it. Usage: test/fuzz/run.sh [seconds] [workdir]
# CI runs it for 25 s; for a longer campaign: test/fuzz/run.sh 3600 /tmp/fz
# (the corpus in <workdir>/corpus is kept between runs). Exit 77: no clang.
set -e
secs=${1:-25}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work/corpus"
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "clang not found: skipping"
	exit 77
fi
inc=$(pkg-config --cflags libmlx5 libibverbs 2>/dev/null || true)
cfg=$(mktemp -d)
# mlx5_poll.c needs no generated header but cqpoll's public ones.
"$cc" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined $inc \
	-I"$src/lib/cqpoll" -I"$src/drivers/mlx5" -I"$src/drivers/common/ibv" -I"$cfg" \
	"$src/test/fuzz/fuzz_mlx5_cqe.c" "$src/drivers/mlx5/mlx5_poll.c" \
	"$src/drivers/mlx5/mlx5_poll_slow.c" \
	-o "$work/fuzz_mlx5_cqe"
"$work/fuzz_mlx5_cqe" -max_total_time="$secs" -max_len=1030 "$work/corpus"
