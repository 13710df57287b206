/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_DEV_H
#define TPCQ_DEV_H

/*
 * The devices a run can drive (devices/): one struct tpcq_dev each, opened
 * per CQ into a struct tpcq_devctx.
 */

#include "cpus.h"
#include "params.h"

struct tpcq_run;

/* What every completion must carry; the poller counts the others as bad. */
struct tpcq_expect {
	uint8_t opcode;
	uint32_t qp_num;
	uint32_t byte_len;
	bool check_byte_len;      /* requester completions report no length */
	/* Bytes of payload each completion carries inline (F_INLINE); 0: none. */
	uint32_t inline_len;
	/*
	 * The sequence number a completion carries, for devices whose wr_id
	 * is not it (ethdev: the mbuf, freed here); NULL: wr_id.
	 */
	uint64_t (*seq_of)(const struct cqpoll_completion *c);
};

/*
 * Byte @p i of the inline payload of the completion of sequence @p seq (its
 * CQ's own count): the poller checks what the device scattered.
 */
static inline uint8_t
tpcq_payload_byte(uint64_t seq, unsigned int i)
{
	return (uint8_t)((seq >> (8 * (i % 8))) ^ (i * 37u));
}

/* An open device: the CQ the poller consumes, the state the generator posts with. */
struct tpcq_devctx {
	struct cqpoll_cq *cq;
	void *priv;               /* the device's own state */
	/* Bits of the sequence number that wr_id carries back (mlx5: 16). */
	uint64_t wr_id_mask;
	/* Completion timestamps are CLOCK_MONOTONIC ns: latency is measured from them. */
	bool monotonic_ts;
	/* Posts the device can hold unread; 0: no bound but the CQ's back-pressure. */
	uint32_t max_outstanding;
	struct tpcq_expect expect;
	bool compress;            /* mlx5-emu with --cqe-compress */
	/*
	 * Set by a post of a device with tpcq_dev::service: the post woke no
	 * consumer, so the consumer's next arm may find this CQE and needs the
	 * device to read its doorbell.
	 */
	bool watch;
	/* The poller's completion count, for devices that must bound what they post. */
	const uint64_t *consumed;
	/*
	 * The poller runs on a worker lcore and the generator on the main
	 * one (ethdev:tap: signals meant for the poller go to the process).
	 */
	bool poller_on_worker;
};

/*
 * A device the generator can drive: open creates the CQ and whatever posts
 * into it; post makes the completion of sequence number seq happen (-ENOSPC:
 * no room yet, try again); close releases everything open made.
 */
struct tpcq_dev {
	const char *name;         /* --dev value, or its part before ':' */
	const char *help;         /* one line for --help */
	bool takes_ibdev;         /* the name is followed by ":<ibdev>" */
	const char *arg_name;     /* what follows ':' in --help; NULL: IBDEV */
	uint32_t arms;            /* allowed arm semantics, bit (1 << value) */
	enum cqpoll_arm_semantics default_arm;
	const char *arm_help;     /* what the arm values mean on this device */
	uint32_t faults;          /* TPCQ_FAULT_* it can inject */
	/* Opened after rte_eal_init(): the device is a DPDK port. */
	bool needs_eal;
	int (*open)(struct tpcq_devctx *dc, const struct tpcq_params *p);
	int (*post)(struct tpcq_devctx *dc, uint64_t seq);
	/*
	 * Emulated devices without a device thread: read the doorbells now.
	 * NULL: the device needs no help (the generator may sleep any time).
	 */
	void (*service)(struct tpcq_devctx *dc);
	/*
	 * On the poller's thread, after it read @p n completions of @p dc and
	 * before the generator learns of them: a device whose consumer must
	 * post again (UCX receives) does so here. NULL: nothing to do.
	 */
	void (*consumed)(struct tpcq_devctx *dc, const struct cqpoll_completion *c,
			 unsigned int n);
	/*
	 * On the poller's thread, in the naive transition's window (after its
	 * last empty poll, before its arm): what brings a completion into the
	 * CQ there on a device whose completions arrive only through the
	 * consumer thread (UCX: a progress of the worker, as an application's
	 * own progress or post would run). NULL: the device writes its CQ by
	 * itself.
	 */
	void (*naive_window)(struct tpcq_devctx *dc);
	void (*close)(struct tpcq_devctx *dc);
};


/* dev.c */
/*
 * 0; -ENOENT: no such device; -EINVAL: ':' wrongly given or missing;
 * -ENAMETOOLONG; -ENOPKG: its plugin is not here (tpcq_dev_missing() says
 * why).
 */
int tpcq_dev_select(const char *name, struct tpcq_params *p);
const char *tpcq_dev_missing(void);
void tpcq_dev_default(struct tpcq_params *p);
int tpcq_dev_check(struct tpcq_params *p, bool arm_given, char *why, size_t len);
void tpcq_dev_usage(FILE *f);
/* Help text indented to the option column and wrapped to 80 columns. */
void tpcq_usage_wrap(FILE *f, const char *text);
const char *tpcq_dev_names(void);
int tpcq_dev_open(struct tpcq_devctx *dc, const struct tpcq_params *p);
void tpcq_dev_close(const struct tpcq_params *p, struct tpcq_devctx *dc);

/*
 * dev_sw.c: the sw driver alone, for a program without the kit; with it,
 * the kit's emulated software device (dev_emu.c, the emu plugin) runs as sw.
 */
extern const struct tpcq_dev tpcq_dev_sw;

/* loopback.c: real devices, a loopback RC QP pair. */
extern const struct tpcq_dev tpcq_dev_mlx5_hw;
extern const struct tpcq_dev tpcq_dev_verbs_hw;
int tpcq_loopback_first_mlx5(char *name, size_t len, char *why, size_t why_len);

/*
 * dev_uring.c: a real queue written by the kernel. The plugins' (plugin.h):
 * dev_ofi.c and dev_ofi_peer.c, libfabric (the sending peer in this
 * process, or in a child); dev_ucx.c, two UCP workers over one transport.
 */
extern const struct tpcq_dev tpcq_dev_uring;
extern const struct tpcq_dev tpcq_dev_ofi;
extern const struct tpcq_dev tpcq_dev_ofi_peer;
int tpcq_ofi_peer_open(struct tpcq_devctx *dc, const struct tpcq_params *p);

/*
 * dev_ethdev.c: an Rx queue of a DPDK port (drivers/ethdev), fed by a peer
 * port in this process or by a kernel socket; and the l3fwd-power
 * transition's sleep on it, which counts into res->peer.
 */
extern const struct tpcq_dev tpcq_dev_ethdev;
int tpcq_ethdev_l3fwd_sleep(struct tpcq_devctx *dc, struct cqpoll_cq_stats *st);


/*
 * NUMA (numa.c): the device's node (--dev-numa-node, else sysfs for a real
 * device; -1: none known), the default EAL lcores (two CPUs, the node's
 * first), and a warning per poller on another socket (returns how many).
 */
int tpcq_dev_numa_node(const struct tpcq_params *p);
unsigned int tpcq_numa_check(const struct tpcq_params *p,
			     const struct tpcq_run *run, int node);

#endif /* TPCQ_DEV_H */
