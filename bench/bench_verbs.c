/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost per completion of the verbs driver's poll path on verbs-emu: cycles
 * (rdtsc around cqpoll_poll_burst() only; posting is the device's work and is
 * not timed) at bursts of 1, 8 and 32, for each poll variant. Instructions:
 * run one variant under callgrind with collection limited to the burst poll:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.verbs \
 *     --toggle-collect=cqpoll_verbs_poll_ex_ts \
 *     build/bench/bench_verbs --variant=ex-ts --burst=8 --completions=100000
 *   callgrind_annotate /tmp/cg.verbs | head   # total Ir / completions
 *
 * (cqpoll_verbs_poll_ex, cqpoll_verbs_poll_wc for the other variants.) The
 * emulator's callbacks (start_poll, read_*) run inside the collected region,
 * as a provider's would on hardware.
 *
 * Usage: bench_verbs [--variant=ex-ts|ex|wc|all] [--burst=N] [--completions=N]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "cqpoll.h"
#include "cqpoll_verbs.h"
#include "cqpoll_verbs_emu.h"

#define RING 4096

struct variant {
	const char *name;
	uint32_t emu_flags;
};

static const struct variant variants[] = {
	{ "ex-ts", 0 },
	{ "ex", CQPOLL_VERBS_EMU_F_NO_TIMESTAMP },
	{ "wc", CQPOLL_VERBS_EMU_F_NO_CQ_EX },
};

static int
measure(const struct variant *v, unsigned int burst, uint64_t completions,
	double *cycles_per)
{
	struct cqpoll_verbs_emu_conf conf = { .size = RING, .emu_flags = v->emu_flags };
	struct cqpoll_completion c[64], p = { .byte_len = 64, .qp_num = 1,
					      .opcode = CQPOLL_OP_RECV };
	uint64_t done = 0, cycles = 0, t0;
	struct cqpoll_cq *cq;
	unsigned int i;
	int r;

	cq = cqpoll_verbs_emu_cq_create(&conf);
	if (cq == NULL) {
		fprintf(stderr, "create: %s\n", strerror(errno));
		return -1;
	}
	while (done < completions) {
		for (i = 0; i < burst; i++) {
			p.wr_id = done + i;
			if (cqpoll_verbs_emu_cq_post(cq, &p) != 0)
				abort();
		}
		t0 = __rdtsc();
		r = cqpoll_poll_burst(cq, c, burst);
		cycles += __rdtsc() - t0;
		if (r != (int)burst)
			abort();
		done += (uint64_t)r;
	}
	cqpoll_cq_destroy(cq);
	*cycles_per = (double)cycles / (double)done;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "burst", required_argument, NULL, 'b' },
		{ "completions", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	static const unsigned int bursts[] = { 1, 8, 32 };
	const char *only = "all";
	uint64_t completions = 4000000;
	unsigned int one_burst = 0;
	size_t vi, bi;
	double cpc;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'v':
			only = optarg;
			break;
		case 'b':
			one_burst = (unsigned int)strtoul(optarg, NULL, 10);
			if (one_burst == 0 || one_burst > 64)
				return 1;
			break;
		case 'n':
			completions = strtoull(optarg, NULL, 10);
			break;
		default:
			return 1;
		}
	}
	printf("%-8s %6s %12s\n", "variant", "burst", "cycles/cqe");
	for (vi = 0; vi < sizeof(variants) / sizeof(variants[0]); vi++) {
		if (strcmp(only, "all") != 0 && strcmp(only, variants[vi].name) != 0)
			continue;
		for (bi = 0; bi < sizeof(bursts) / sizeof(bursts[0]); bi++) {
			unsigned int b = one_burst != 0 ? one_burst : bursts[bi];

			/* Warm up caches and branch predictors, then measure. */
			if (measure(&variants[vi], b, completions / 10 + b, &cpc) != 0 ||
			    measure(&variants[vi], b, completions, &cpc) != 0)
				return 1;
			printf("%-8s %6u %12.1f\n", variants[vi].name, b, cpc);
			if (one_burst != 0)
				break;
		}
	}
	return 0;
}
