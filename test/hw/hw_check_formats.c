/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CQE formats an mlx5 device writes, through the mlx5 driver: receives
 * scattered into the CQE (32 bytes in a 64-byte CQE, 64 in a 128-byte one;
 * rdma-core enables scatter-to-CQE by default), 128-byte CQEs, and
 * compressed CQEs (mlx5dv_create_cq with MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE).
 */
#include <stdio.h>
#include <string.h>

#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "hw_check.h"

#define MAXC 160

int hw_compare_run(struct hw_target *t, enum hw_driver d, uint32_t mlx5_flags,
		   struct hw_expect *exp, int *nexp, struct cqpoll_completion *sorted,
		   char *why, size_t len);

static bool
need_mlx5(struct hw_target *t, struct hw_result *r)
{
	if (!t->has_mlx5)
		hw_skip(r, "%s is not an mlx5 device (its driver is verbs): no mlx5 CQE formats",
			t->name);
	return t->has_mlx5;
}

/* One receive of len bytes on a CQ with flags: its payload must be in the CQE. */
static void
inline_scatter(struct hw_target *t, struct hw_result *r, uint32_t flags, uint32_t len)
{
	struct hw_lane_conf conf = { .driver = HW_DRV_MLX5, .mlx5_flags = flags,
				     .b_on_cq = true, .a_off_cq = true, .recvs = 4 };
	struct hw_step s = { .kind = HW_STEP_SEND, .len = len };
	struct cqpoll_completion c[2];
	struct hw_expect e[4];
	uint32_t seen[2] = { 0, 0 }, k;
	const struct hw_expect *p;
	struct hw_run run;
	char why[256];
	int ne = 0, n;

	if (!need_mlx5(t, r))
		return;
	if (hw_run_open(&run, t, &conf, why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	n = hw_run_step(&run, &s, e, &ne, 4);
	if (n == 0)
		n = hw_run_collect(&run, c, 1, 2000);
	else
		n = -1;
	if (n != 1) {
		hw_fail(r, "no receive completion");
		goto out;
	}
	p = hw_pair(&run, &c[0], e, ne, seen, why, sizeof(why));
	if (p == NULL || hw_match(&run, &c[0], p, why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		goto out;
	}
	if (!(c[0].flags & CQPOLL_COMPLETION_F_INLINE)) {
		/* The device chose to write the buffer: the format did not occur. */
		if (t->emulated)
			hw_fail(r, "the emulated device scattered %u bytes, the driver saw none",
				len);
		else
			hw_skip(r, "the device wrote the %u-byte receive to its buffer, not the "
				"CQE (MLX5_SCATTER_TO_CQE=0 in the environment?)", len);
		goto out;
	}
	for (k = 0; k < len; k++) {
		if (((const uint8_t *)c[0].inline_data)[k] != hw_payload(p->payload_seed, k)) {
			hw_fail(r, "inline payload byte %u differs", k);
			goto out;
		}
	}
	hw_data_i64(r, "bytes", len);
	hw_pass(r, "a %u-byte receive came in the CQE (%s CQE), every byte as sent", len,
		(flags & CQPOLL_MLX5_F_CQE128) ? "128-byte" : "64-byte");
out:
	hw_run_close(&run);
}

static void
inline32(struct hw_target *t, struct hw_result *r)
{
	inline_scatter(t, r, 0, 24);
}

static void
inline64(struct hw_target *t, struct hw_result *r)
{
	inline_scatter(t, r, CQPOLL_MLX5_F_CQE128, 48);
}

/* The whole side-by-side traffic, errors included, in 128-byte CQEs. */
static void
cqe128(struct hw_target *t, struct hw_result *r)
{
	struct hw_expect e[32];
	struct cqpoll_completion c[32];
	char why[512];
	int n;

	if (!need_mlx5(t, r))
		return;
	if (hw_compare_run(t, HW_DRV_MLX5, CQPOLL_MLX5_F_CQE128, e, &n, c, why,
			   sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	hw_data_i64(r, "completions", n);
	hw_pass(r, "%d completions in 128-byte CQEs as the verbs specification says", n);
}

/* Back-to-back receives without immediate or payload in the CQE: compressible. */
static void
compressed(struct hw_target *t, struct hw_result *r)
{
	enum { N = 64 };
	struct hw_lane_conf conf = { .driver = HW_DRV_MLX5, .b_on_cq = true, .a_off_cq = true,
				     .recvs = N, .mlx5_flags = CQPOLL_MLX5_F_CQE_COMPRESS,
				     .size = 256 };
	struct hw_step s = { .kind = HW_STEP_SEND, .len = 64 };
	struct cqpoll_completion c[N];
	struct hw_expect e[N];
	uint32_t seen[2] = { 0, 0 };
	struct hw_run run;
	char why[256];
	int ne = 0, n, i;

	if (!need_mlx5(t, r))
		return;
	if (hw_run_open(&run, t, &conf, why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	for (i = 0; i < N; i++) {
		if (hw_run_step(&run, &s, e, &ne, N) != 0) {
			hw_fail(r, "send %d failed", i);
			goto out;
		}
	}
	n = hw_run_collect(&run, c, N, 3000);
	if (n != N) {
		hw_fail(r, "%d receive completions of %d", n, N);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct hw_expect *p = hw_pair(&run, &c[i], e, ne, seen, why, sizeof(why));

		if (p == NULL || hw_match(&run, &c[i], p, why, sizeof(why)) != 0) {
			hw_fail(r, "%s", why);
			goto out;
		}
	}
	if (t->emulated) {
		struct cqpoll_mlx5_emu_stats st;

		cqpoll_mlx5_emu_stats_get(run.cq, &st);
		hw_data_u64(r, "sessions", st.sessions);
		if (st.sessions == 0) {
			hw_fail(r, "the device wrote no compressed session: nothing was checked");
			goto out;
		}
		hw_pass(r, "%d receives, %llu compressed sessions expanded, every completion "
			"as expected", N, (unsigned long long)st.sessions);
	} else {
		hw_pass(r, "%d receives on a CQ created with compression, every completion as "
			"expected (whether the device compressed is not visible to the driver)",
			N);
	}
out:
	hw_run_close(&run);
}

const struct hw_check hw_check_inline32 = {
	"cqe-inline-32", "receive scattered into a 64-byte CQE (32 bytes)", inline32 };
const struct hw_check hw_check_inline64 = {
	"cqe-inline-64", "receive scattered into a 128-byte CQE (64 bytes)", inline64 };
const struct hw_check hw_check_cqe128 = {
	"cqe-128", "128-byte CQEs, errors included", cqe128 };
const struct hw_check hw_check_compressed = {
	"cqe-compressed", "compressed CQEs (MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE)",
	compressed };
