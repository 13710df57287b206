/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Failures of the emulated mlx5 device, as a ConnectX reports them: on the
 * context's async fd (IBV_EVENT_CQ_ERR, IBV_EVENT_DEVICE_FATAL,
 * IBV_EVENT_PORT_ERR), never on the CQ's completion channel, and with the
 * device writing no CQE and firing no completion event from then on. The
 * driver hears of it only through its async path (drivers/common/ibv).
 */

#include <errno.h>

#include "cqpoll_verbs_emu.h"
#include "mlx5_emu_private.h"
#include "verbs_emu_fail.h"

static int
fail_post(void *dev, const struct cqpoll_completion *c)
{
	return cqpoll_mlx5_emu_post(dev, c);
}

/* No CQE, no completion event, no doorbell handled from here on. */
static int
fail_stop(void *cq, int err)
{
	struct cqpoll_mlx5_emu_dev *dev = cqpoll_mlx5_emu_dev_of(cqpoll_cq_priv(cq));

	pthread_mutex_lock(&dev->lock);
	if (dev->broken) {
		pthread_mutex_unlock(&dev->lock);
		return -EALREADY;
	}
	cqpoll_mlx5_emu_zip_flush(dev);
	dev->broken = 1;
	dev->broken_err = err;
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int
cqpoll_mlx5_emu_fail(struct cqpoll_cq *cq, enum ibv_event_type event,
		     const uint64_t *flush, unsigned int n_flush)
{
	struct cqpoll_verbs_emu_failure f = {
		.post = fail_post,
		.stop = fail_stop,
		.dev = cq,
	};
	struct cqpoll_mlx5_emu_dev *dev;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_mlx5_emu_ops ||
	    (n_flush != 0 && flush == NULL))
		return -EINVAL;
	dev = cqpoll_mlx5_emu_dev_of(cqpoll_cq_priv(cq));
	/* Async events need a context: only a CQ on an emulated channel has one. */
	if (dev->ev_cq == NULL)
		return cqpoll_verbs_emu_fail_errno(event) == 0 ? -EINVAL : -ENOTSUP;
	f.ctx = dev->ev_cq->context;
	f.cq = dev->ev_cq;
	return cqpoll_verbs_emu_fail_report(&f, event, flush, n_flush);
}
