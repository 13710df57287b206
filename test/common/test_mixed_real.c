/* SPDX-License-Identifier: BSD-3-Clause */
/* One CQ of each kind for a mixed poll group: see test_mixed_real.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_test.h"
#ifdef CQPOLL_TEST_MLX5
#include "cqpoll_mlx5_emu.h"
#endif
#ifdef CQPOLL_TEST_URING
#include "uring_test.h"
#endif
#ifdef CQPOLL_TEST_OFI
#include "ofi_test.h"
#endif
#ifdef CQPOLL_TEST_UCX
#include "ucx_test.h"
#endif

#include "test_mixed_real.h"

const char *const mr_kind_names[MR_KINDS] = {
	"sw", "uring", "ofi-tcp", "mlx5-emu", "ucx-posix",
};

/* The naive control's wrapper: the real uring handle, and the arm's delay. */
struct mr_naive {
	struct cqpoll_cq *real;
	const struct cqpoll_driver_ops *ops;
	uint64_t delay_ns;
};

static int
mr_naive_poll(void *priv, struct cqpoll_completion *c, unsigned int n)
{
	struct mr_naive *w = priv;

	return cqpoll_poll_burst(w->real, c, n);
}

static int
mr_naive_arm(void *priv)
{
	struct mr_naive *w = priv;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)w->delay_ns };

	/* A sleep, not a spin: the producer runs meanwhile even on one CPU. */
	if (w->delay_ns != 0)
		nanosleep(&ts, NULL);
	return w->ops->arm(cqpoll_cq_priv(w->real));
}

static int
mr_naive_event_fd(void *priv)
{
	struct mr_naive *w = priv;

	return w->ops->event_fd(cqpoll_cq_priv(w->real));
}

static int
mr_naive_event_get(void *priv)
{
	struct mr_naive *w = priv;

	return w->ops->event_get(cqpoll_cq_priv(w->real));
}

static void
mr_naive_destroy(void *priv)
{
	free(priv);
}

static const struct cqpoll_driver_ops mr_naive_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "uring-declared-level",
	.arm = mr_naive_arm,
	.event_fd = mr_naive_event_fd,
	.event_get = mr_naive_event_get,
	.destroy = mr_naive_destroy,
};

/* Wrap @p real (an io_uring CQ) with its arm declared level. */
static struct cqpoll_cq *
mr_naive_wrap(struct cqpoll_cq *real, uint64_t delay_ns)
{
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_LEVEL };
	struct cqpoll_cq_info info;
	struct mr_naive *w = calloc(1, sizeof(*w));
	struct cqpoll_cq *cq;

	if (w == NULL || cqpoll_cq_info_get(real, &info) != 0) {
		free(w);
		return NULL;
	}
	*w = (struct mr_naive){ .real = real, .ops = cqpoll_cq_driver(real),
				.delay_ns = delay_ns };
	params.size = info.size;
	cq = cqpoll_cq_alloc(&mr_naive_ops, mr_naive_poll, w, &params);
	if (cq == NULL)
		free(w);
	return cq;
}

int
mr_open(struct mr_member *m, enum mr_kind kind, int naive, uint64_t naive_delay_ns,
	char *why, size_t len)
{
	*m = (struct mr_member){ .kind = kind };
	switch (kind) {
	case MR_SW: {
		/* Edge, with the windows widened now and then (as stress-group). */
		struct cqpoll_sw_emu_conf c = {
			.size = 256, .arm = CQPOLL_ARM_EDGE,
			.faults = {
				.visibility_delay_ns = 1000, .visibility_delay_pct = 20,
				.arm_delay_ns = 5000, .arm_delay_pct = 20,
				.spurious_event_pct = 1, .duplicate_event_pct = 1,
				.seed = 0x51ed5eedull,
			},
		};

		m->real = cqpoll_sw_emu_cq_create(&c);
		break;
	}
	case MR_URING:
#ifdef CQPOLL_TEST_URING
		if (test_uring_probe(why, len) < 0)
			return -ENOTSUP;
		m->real = cqpoll_uring_cq_create(NULL);
		if (m->real == NULL)
			break;
		m->dev = cqpoll_uring_cq_ring(m->real);
		if (naive) {
			m->cq = mr_naive_wrap(m->real, naive_delay_ns);
			if (m->cq == NULL) {
				cqpoll_cq_destroy(m->real);
				m->real = NULL;
				return -ENOMEM;
			}
		}
		break;
#else
		snprintf(why, len, "this build has no io_uring driver");
		return -ENOTSUP;
#endif
	case MR_OFI:
#ifdef CQPOLL_TEST_OFI
	{
		struct test_ofi *t = calloc(1, sizeof(*t));

		if (t == NULL)
			return -ENOMEM;
		m->dev = t;
		if (test_ofi_open(t, "tcp", why, len) != 0) {
			test_ofi_close(t);
			free(t);
			m->dev = NULL;
			return -ENOTSUP;
		}
		m->real = cqpoll_ofi_cq_open(t->fabric, t->domain, NULL);
		if (m->real != NULL && test_ofi_attach(t, cqpoll_ofi_cq_fid(m->real),
						       why, len) != 0) {
			test_ofi_close_eps(t);
			cqpoll_cq_destroy(m->real);
			m->real = NULL;
			test_ofi_close(t);
			free(t);
			m->dev = NULL;
			return -ENOTSUP;
		}
		break;
	}
#else
		snprintf(why, len, "this build has no libfabric driver");
		return -ENOTSUP;
#endif
	case MR_UCX:
#ifdef CQPOLL_TEST_UCX
	{
		struct test_ucx *t = calloc(1, sizeof(*t));

		if (t == NULL)
			return -ENOMEM;
		m->dev = t;
		if (test_ucx_open(t, "posix", why, len) != 0 ||
		    test_ucx_hello(t, why, len) != 0) {
			test_ucx_close(t);
			free(t);
			m->dev = NULL;
			return -ENOTSUP;
		}
		m->real = cqpoll_ucx_cq_create(t->b, NULL);
		break;
	}
#else
		snprintf(why, len, "this build has no UCX driver");
		return -ENOTSUP;
#endif
	case MR_MLX5:
#ifdef CQPOLL_TEST_MLX5
	{
		struct cqpoll_mlx5_emu_conf c = { .size = 256, .arm = CQPOLL_ARM_LEVEL };

		m->real = cqpoll_mlx5_emu_cq_create(&c);
		break;
	}
#else
		snprintf(why, len, "this build has no mlx5 driver");
		return -ENOTSUP;
#endif
	default:
		return -EINVAL;
	}
	if (m->real == NULL) {
		snprintf(why, len, "%s: %s", mr_kind_names[kind], strerror(errno));
		return -errno;
	}
	if (m->cq == NULL)
		m->cq = m->real;
	return 0;
}

int
mr_post(struct mr_member *m, uint64_t wr_id)
{
	struct cqpoll_completion c = { .wr_id = wr_id, .byte_len = 8 };

	switch (m->kind) {
	case MR_SW:
		return cqpoll_sw_emu_post(m->real, &c);
#ifdef CQPOLL_TEST_URING
	case MR_URING:
		/* Completed inline by the kernel, in this thread's io_uring_enter(). */
		return test_uring_nop(m->dev, wr_id, 8, false, 0);
#endif
#ifdef CQPOLL_TEST_OFI
	case MR_OFI:
		return test_ofi_post(m->dev, wr_id, 8);
#endif
#ifdef CQPOLL_TEST_MLX5
	case MR_MLX5:
		return cqpoll_mlx5_emu_post(m->real, &c);
#endif
#ifdef CQPOLL_TEST_UCX
	case MR_UCX:
		/* From worker A, in this thread; B's receive waits for the tag. */
		return test_ucx_send(m->dev, wr_id, 8);
#endif
	default:
		return -EINVAL;
	}
}

void
mr_close(struct mr_member *m)
{
	if (m->cq != NULL && m->cq != m->real)
		cqpoll_cq_destroy(m->cq);
#ifdef CQPOLL_TEST_OFI
	if (m->kind == MR_OFI && m->dev != NULL)
		test_ofi_close_eps(m->dev);
#endif
	if (m->real != NULL)
		cqpoll_cq_destroy(m->real);
#ifdef CQPOLL_TEST_OFI
	if (m->kind == MR_OFI && m->dev != NULL) {
		test_ofi_close(m->dev);
		free(m->dev);
	}
#endif
#ifdef CQPOLL_TEST_UCX
	if (m->kind == MR_UCX && m->dev != NULL) {
		test_ucx_close(m->dev);
		free(m->dev);
	}
#endif
	*m = (struct mr_member){ .kind = m->kind };
}

int
mr_consumed(struct mr_member *m, uint64_t tag_base, uint64_t delivered)
{
#ifdef CQPOLL_TEST_UCX
	if (m->kind == MR_UCX) {
		struct test_ucx *t = m->dev;

		t->tag_base = tag_base;
		return test_ucx_post_recvs(t, m->real, delivered + TEST_UCX_WINDOW);
	}
#else
	(void)m;
	(void)tag_base;
	(void)delivered;
#endif
	return 0;
}
