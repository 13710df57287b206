/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs-emu device side: write an entry, make it visible, fire an armed CQ;
 * and the arm, ibv_req_notify_cq(), which is edge-only: entries already
 * visible when it takes effect never fire it.
 */

#include <errno.h>

#include "cqpoll_verbs.h"
#include "verbs_emu_fail.h"
#include "verbs_emu_private.h"

static uint8_t
ibv_opcode_of(uint8_t op)
{
	switch (op) {
	case CQPOLL_OP_SEND: return IBV_WC_SEND;
	case CQPOLL_OP_RDMA_WRITE: return IBV_WC_RDMA_WRITE;
	case CQPOLL_OP_RDMA_READ: return IBV_WC_RDMA_READ;
	case CQPOLL_OP_COMP_SWAP: return IBV_WC_COMP_SWAP;
	case CQPOLL_OP_FETCH_ADD: return IBV_WC_FETCH_ADD;
	case CQPOLL_OP_BIND_MW: return IBV_WC_BIND_MW;
	case CQPOLL_OP_LOCAL_INV: return IBV_WC_LOCAL_INV;
	case CQPOLL_OP_TSO: return IBV_WC_TSO;
	case CQPOLL_OP_RECV: return IBV_WC_RECV;
	case CQPOLL_OP_RECV_RDMA_WITH_IMM: return IBV_WC_RECV_RDMA_WITH_IMM;
	default: return op;
	}
}

static void
raise_event(struct cqpoll_verbs_emu_cq *q, uint32_t cover)
{
	/* Cover before delivery: an oracle that sees the cover sees the event. */
	cqpoll_emu_advance(&q->covered, cover);
	cqpoll_verbs_emu_deliver(q, cqpoll_emu_chance(&q->device_rng,
			q->faults.duplicate_event_pct) ? 2 : 1);
}

int
cqpoll_verbs_emu_ibv_post(struct ibv_cq *cq, const struct cqpoll_completion *comp)
{
	struct cqpoll_verbs_emu_cqe *e;
	struct cqpoll_verbs_emu_cq *q;
	uint32_t pi, armed;
	int fire, owed;

	if (cq == NULL || comp == NULL || !cqpoll_verbs_emu_is_context(cq->context))
		return -EINVAL;
	q = emu_cq(cq);
	/* A failed device writes nothing more. */
	if (__atomic_load_n(&q->dead, __ATOMIC_ACQUIRE) != 0)
		return __atomic_load_n(&q->dead, __ATOMIC_ACQUIRE);
	pi = q->pi;
	if (pi - q->ci_cache > q->mask) {
		q->ci_cache = __atomic_load_n(&q->ci_db, __ATOMIC_ACQUIRE);
		/* Full: refuse rather than overwrite an entry not yet read. */
		if (pi - q->ci_cache > q->mask)
			return -ENOSPC;
	}
	e = &q->ring[pi & q->mask];
	e->wr_id = comp->wr_id;
	e->byte_len = comp->byte_len;
	e->qp_num = comp->qp_num;
	e->status = comp->status;
	e->opcode = ibv_opcode_of(comp->opcode);
	e->wc_flags = 0;
	if (comp->flags & CQPOLL_COMPLETION_F_IMM)
		e->wc_flags |= IBV_WC_WITH_IMM;
	if (comp->flags & CQPOLL_COMPLETION_F_INV)
		e->wc_flags |= IBV_WC_WITH_INV;
	e->imm_data = comp->imm_data;
	e->vendor_err = comp->status != CQPOLL_STATUS_SUCCESS ? comp->vendor_err : 0;
	e->solicited = (comp->flags & CQPOLL_COMPLETION_F_SOLICITED) != 0;
	if (cqpoll_emu_chance(&q->device_rng, q->faults.visibility_delay_pct))
		cqpoll_emu_spin_ns(cqpoll_emu_rand(&q->device_rng) %
					 (q->faults.visibility_delay_ns + 1ull));
	e->ts = cqpoll_verbs_emu_hca_clock();
	e->wall_ns = cqpoll_verbs_emu_wall_ns();
	__atomic_store_n(&e->owner, (pi >> q->log2_size) & 1, __ATOMIC_RELEASE);
	q->pi = ++pi;
	__atomic_store_n(&q->pi_vis, pi, __ATOMIC_RELEASE);
	/*
	 * Entry visible, then look at the arm; the arm stores armed, then the
	 * consumer polls. With a full fence on both sides one sees the other:
	 * an entry racing an arm is either fired for or polled.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Solicited-only arms fire for solicited and failed completions (IBA). */
	owed = !__atomic_load_n(&q->sol_mode, __ATOMIC_RELAXED) || e->solicited ||
	       e->status != IBV_WC_SUCCESS;
	armed = __atomic_load_n(&q->armed, __ATOMIC_RELAXED);
	fire = armed == EMU_ARM_NEXT || (armed == EMU_ARM_SOLICITED && owed);
	if (fire && __atomic_compare_exchange_n(&q->armed, &armed, EMU_ARM_NONE, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		raise_event(q, pi);
	else if (cqpoll_emu_chance(&q->device_rng, q->faults.spurious_event_pct))
		cqpoll_verbs_emu_deliver(q, 1);
	/* After the raise: the oracle never sees an entry whose raise is pending. */
	if (owed)
		__atomic_store_n(&q->posted, pi, __ATOMIC_RELEASE);
	return 0;
}

static void
arm_delay(struct cqpoll_verbs_emu_cq *q)
{
	if (cqpoll_emu_chance(&q->consumer_rng, q->faults.arm_delay_pct))
		cqpoll_emu_spin_ns(cqpoll_emu_rand(&q->consumer_rng) %
					 (q->faults.arm_delay_ns + 1ull));
}

static void
run_hook(struct cqpoll_verbs_emu_cq *q, enum cqpoll_verbs_emu_hook_point p)
{
	if (q->hook[p] != NULL)
		q->hook[p](q->hook_arg[p]);
}

int
cqpoll_verbs_emu_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct cqpoll_verbs_emu_cq *q = emu_cq(cq);

	run_hook(q, CQPOLL_VERBS_EMU_HOOK_BEFORE_ARM);
	/* A dead device takes the doorbell and does nothing, as hardware would. */
	if (__atomic_load_n(&q->dead, __ATOMIC_ACQUIRE) != 0)
		return 0;
	arm_delay(q);
	__atomic_store_n(&q->sol_mode, solicited_only != 0, __ATOMIC_RELAXED);
	__atomic_store_n(&q->armed, solicited_only ? EMU_ARM_SOLICITED : EMU_ARM_NEXT,
			 __ATOMIC_RELAXED);
	/* Pairs with the fence in the post. Edge: nothing looks back at the ring. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	arm_delay(q);
	run_hook(q, CQPOLL_VERBS_EMU_HOOK_AFTER_ARM);
	return 0;
}

static int
fail_post(void *dev, const struct cqpoll_completion *c)
{
	return cqpoll_verbs_emu_ibv_post(ibv_cq_ex_to_cq(&((struct cqpoll_verbs_emu_cq *)dev)->ex), c);
}

/* No entry and no completion event from here on; the arm is dropped. */
static int
fail_stop(void *dev, int err)
{
	struct cqpoll_verbs_emu_cq *q = dev;
	int32_t none = 0;

	if (!__atomic_compare_exchange_n(&q->dead, &none, err, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return -EALREADY;
	__atomic_store_n(&q->armed, EMU_ARM_NONE, __ATOMIC_RELEASE);
	return 0;
}

int
cqpoll_verbs_emu_fail(struct cqpoll_cq *cq, enum ibv_event_type event,
		      const uint64_t *flush, unsigned int n_flush)
{
	struct ibv_cq *vcq = cqpoll_verbs_cq_ibv(cq);
	struct cqpoll_verbs_emu_failure f = {
		.post = fail_post,
		.stop = fail_stop,
	};

	if (vcq == NULL || !cqpoll_verbs_emu_is_context(vcq->context))
		return -EINVAL;
	f.dev = emu_cq(vcq);
	f.ctx = vcq->context;
	f.cq = vcq;
	return cqpoll_verbs_emu_fail_report(&f, event, flush, n_flush);
}
