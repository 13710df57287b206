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

int
cqpoll_mlx5_emu_fail(struct cqpoll_cq *cq, enum ibv_event_type event,
		     const uint64_t *flush, unsigned int n_flush)
{
	struct cqpoll_completion c = { .status = CQPOLL_STATUS_WR_FLUSH_ERR };
	struct cqpoll_mlx5_emu_dev *dev;
	unsigned int i;
	int err, r;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_mlx5_emu_ops ||
	    (n_flush != 0 && flush == NULL))
		return -EINVAL;
	switch (event) {
	case IBV_EVENT_CQ_ERR:
		err = -EOVERFLOW;
		break;
	case IBV_EVENT_DEVICE_FATAL:
		err = -ENODEV;
		break;
	case IBV_EVENT_PORT_ERR:
		err = -ENETDOWN;
		break;
	default:
		return -EINVAL;
	}
	dev = cqpoll_mlx5_emu_dev_of(cqpoll_cq_priv(cq));
	/* Async events need a context: only a CQ on an emulated channel has one. */
	if (dev->ev_cq == NULL)
		return -ENOTSUP;
	/* The QPs' outstanding work first, flushed in order (a port error). */
	for (i = 0; i < n_flush; i++) {
		c.wr_id = flush[i];
		r = cqpoll_mlx5_emu_post(cq, &c);
		if (r < 0)
			return r;
	}
	pthread_mutex_lock(&dev->lock);
	if (dev->broken) {
		pthread_mutex_unlock(&dev->lock);
		return -EALREADY;
	}
	cqpoll_mlx5_emu_zip_flush(dev);
	/* No CQE, no completion event, no doorbell handled from here on. */
	dev->broken = 1;
	dev->broken_err = err;
	pthread_mutex_unlock(&dev->lock);
	return cqpoll_verbs_emu_async_event(dev->ev_cq->context, event, dev->ev_cq, 1);
}
