/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_OFI_H
#define CQPOLL_OFI_H

/**
 * @file
 * libfabric driver: a libfabric completion queue as a cqpoll CQ, on any
 * provider whose CQs have a file-descriptor wait object (tcp here; verbs,
 * EFA, cxi or psm3 on clusters).
 *
 * The burst poll is fi_cq_read(), and fi_cq_readerr() for error entries.
 * The arm is fi_trywait(), libfabric's own poll-and-arm: it returns
 * -FI_EAGAIN when completions may be pending, so the driver declares
 * report-missed semantics (CQPOLL_ARM_REPORT_MISSED) and
 * cqpoll_poll_and_arm() polls again until it succeeds. The event fd is the
 * CQ's wait object, from fi_control(FI_GETWAIT). See doc/guides/ofi-driver.md.
 *
 * A completion maps an entry as follows: op_context to wr_id
 * (CQPOLL_COMPLETION_F_WR_ID), len to byte_len, the FI_RECV / FI_SEND /
 * FI_RMA flags to opcode, remote CQ data to imm_data
 * (CQPOLL_COMPLETION_F_IMM). An error entry has status
 * CQPOLL_STATUS_WR_FLUSH_ERR (FI_ECANCELED), CQPOLL_STATUS_LOC_LEN_ERR
 * (FI_ETRUNC) or CQPOLL_STATUS_GENERAL_ERR, vendor_err = the provider's
 * error number, and the provider's message from cqpoll_ofi_cq_strerror().
 *
 * Connected endpoints: the event queues given in cqpoll_ofi_conf::eqs are
 * read by the driver, and a peer's FI_SHUTDOWN fails the CQ
 * (CQPOLL_CQ_STATE_PEER_CLOSED, -ESHUTDOWN) once its flushed work is
 * delivered (doc/guides/contract.md, section 11).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 */

#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * CQ entries asked of libfabric when cqpoll_ofi_conf.size is 0. libfabric
 * does not report the size a provider picks for 0, so the driver asks for a
 * known one (the size libfabric's util providers, tcp among them, default
 * to), and cqpoll_cq_info_get() reports it.
 */
#define CQPOLL_OFI_CQ_SIZE_DEFAULT 1024

/** Event queues one CQ watches at most (cqpoll_ofi_conf::eqs). */
#define CQPOLL_OFI_EQ_MAX 16

/** Parameters of cqpoll_ofi_cq_open(). */
struct cqpoll_ofi_conf {
	uint32_t size;            /**< CQ entries; 0: CQPOLL_OFI_CQ_SIZE_DEFAULT. */
	uint32_t event_ack_batch; /**< 0: the build-time default. */
	/**
	 * Event queues of the connected endpoints (FI_EP_MSG) whose
	 * completions go to this CQ, @p n_eqs of them (at most
	 * CQPOLL_OFI_EQ_MAX); NULL and 0 for none. EXPERIMENTAL.
	 *
	 * From the CQ's first poll on, the driver reads these EQs (the
	 * application must not): an FI_SHUTDOWN event, or an error entry
	 * (a connection that ended with an error), fails the CQ with
	 * CQPOLL_CQ_STATE_PEER_CLOSED (-ESHUTDOWN, cause "FI_SHUTDOWN"), after
	 * the completions it still holds (the provider's flushed work,
	 * CQPOLL_STATUS_WR_FLUSH_ERR) are delivered; other events are logged
	 * and dropped. So give an EQ only once its endpoints' FI_CONNECTED
	 * was read, and never a passive endpoint's. Each EQ needs an fd wait
	 * object (FI_WAIT_FD or FI_WAIT_UNSPEC): its fd joins the CQ's event
	 * fd, so a consumer asleep on the CQ wakes when the EQ has an event.
	 * The EQs must outlive the CQ; the driver does not close them.
	 */
	struct fid_eq *const *eqs;
	uint32_t n_eqs;           /**< Entries of @p eqs. */
};

/**
 * Open a libfabric CQ with an fd wait object (FI_WAIT_FD,
 * FI_CQ_FORMAT_DATA) on @p domain and wrap it.
 *
 * Bind it to endpoints with fi_ep_bind(ep, &cqpoll_ofi_cq_fid(cq)->fid, ...).
 *
 * Other threads wake a sleeper on it with fi_cq_signal() (a poll group's
 * kicks, cqpoll_cq_fail()). A provider without it (-FI_ENOSYS) is found by
 * one fi_cq_signal() and fi_trywait() here; its CQ then sleeps on its event
 * fd, never in its own wait.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param fabric
 *   The domain's fabric (fi_trywait() needs it).
 * @param domain
 *   Where to open the CQ.
 * @param conf
 *   Parameters; NULL for the defaults.
 * @return
 *   The CQ, or NULL with errno set: EINVAL (NULL argument; n_eqs above
 *   CQPOLL_OFI_EQ_MAX, or eqs NULL or holding NULL with n_eqs set),
 *   EOPNOTSUPP (the provider has no fd wait object for CQs, or an EQ has
 *   none), ENOMEM, or the error of fi_cq_open() / fi_control() /
 *   epoll_ctl() as a positive errno.
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
struct cqpoll_cq *cqpoll_ofi_cq_open(struct fid_fabric *fabric,
				     struct fid_domain *domain,
				     const struct cqpoll_ofi_conf *conf);

/**
 * The libfabric CQ of a CQ.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   A CQ of this driver.
 * @return
 *   The fid_cq (owned by @p cq, closed by cqpoll_cq_destroy()), or NULL
 *   (errno EINVAL) if @p cq is NULL or not a libfabric CQ.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
__cqpoll_experimental
struct fid_cq *cqpoll_ofi_cq_fid(struct cqpoll_cq *cq);

/**
 * The provider's message for the last error completion the CQ returned
 * (fi_cq_strerror() of its error entry).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   A CQ of this driver.
 * @return
 *   The message, valid until the next poll of @p cq; "" if no error
 *   completion was returned yet; NULL (errno EINVAL) if @p cq is NULL or
 *   not a libfabric CQ.
 *
 * Thread safety: consumer thread only.
 */
__cqpoll_experimental
const char *cqpoll_ofi_cq_strerror(struct cqpoll_cq *cq);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_OFI_H */
