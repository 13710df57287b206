/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HW_CHECK_H
#define HW_CHECK_H

/*
 * cqpoll-hw-check: the checks a hardware owner runs (devtools/hw-check.sh,
 * doc/guides/hw-check.md). A check runs against a target: a real RDMA
 * device (hw_target_ibv.c, traffic on loopback RC QPs) or the emulated mlx5
 * and verbs devices (hw_target_emu.c, which post what the traffic model says
 * the device writes). The checks only see the target's operations, so the
 * emulated run goes through the same check code the hardware run does.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll.h"

enum hw_status { HW_PASS, HW_FAIL, HW_SKIP };

/* One check's outcome on one target, and what it measured (JSON members). */
struct hw_result {
	enum hw_status status;
	char reason[512];
	char data[4096];  /* ,"key":value members, or empty */
	size_t data_len;
};

void hw_pass(struct hw_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void hw_fail(struct hw_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void hw_skip(struct hw_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void hw_data_u64(struct hw_result *r, const char *key, uint64_t v);
void hw_data_i64(struct hw_result *r, const char *key, int64_t v);
void hw_data_dbl(struct hw_result *r, const char *key, double v);
void hw_data_str(struct hw_result *r, const char *key, const char *v);
/* s with JSON escapes, into buf (always terminated). */
void hw_json_escape(char *buf, size_t len, const char *s);

enum hw_driver { HW_DRV_VERBS, HW_DRV_MLX5 };

static inline const char *
hw_driver_name(enum hw_driver d)
{
	return d == HW_DRV_MLX5 ? "mlx5" : "verbs";
}

/*
 * The traffic: steps on one loopback RC QP pair, A the requester, B the
 * responder. Every send is signaled and takes one WQE (64-byte building
 * block) in A's send queue, so A's k-th request is WQE index k.
 */
enum hw_step_kind {
	HW_STEP_SEND,           /* SEND of len bytes; consumes one receive on B */
	HW_STEP_WRITE_IMM,      /* RDMA WRITE WITH IMM of len bytes into B's buffer */
	HW_STEP_SEND_BAD_LKEY,  /* SEND whose SGE has a wrong lkey: A goes to error */
	HW_STEP_SEND_IN_ERROR,  /* SEND on A once A is in error: flushed */
	HW_STEP_B_TO_ERROR,     /* ibv_modify_qp(B, ERR): B's receives flushed */
};

struct hw_step {
	enum hw_step_kind kind;
	uint32_t len;
	uint32_t imm;           /* host order */
};

enum hw_side { HW_SIDE_A = 0, HW_SIDE_B = 1 };

/* Ids the traffic gives its work requests: A's k-th send, B's k-th receive. */
#define HW_WRID_A 0x1000000ull
#define HW_WRID_B 0x2000000ull

/* A completion the verbs specification says a step produces. */
struct hw_expect {
	enum hw_side side;
	uint32_t index;         /* WQE index in A's send or B's receive queue */
	uint64_t wr_id;
	uint8_t status;         /* enum cqpoll_status (= ibv_wc_status) */
	uint8_t opcode;         /* valid for successes only */
	uint32_t byte_len;      /* valid for successful receives only */
	uint32_t imm;           /* network order, with CQPOLL_COMPLETION_F_IMM */
	uint16_t flags;         /* CQPOLL_COMPLETION_F_IMM or 0 */
	uint32_t payload_seed;  /* what hw_payload() fills a SEND with */
};

/* The model's view of the QP pair. */
struct hw_model {
	uint32_t sq;            /* sends posted on A */
	uint32_t rq_posted;     /* receives posted on B */
	uint32_t rq_used;       /* receives consumed */
	bool a_error, b_error;
	bool b_on_cq;           /* B's completions reach the CQ under test */
	bool a_off_cq;          /* A's do not (they go to an auxiliary CQ) */
};

/* Completions of step s (at most max), as verbs defines them; -1: invalid step. */
int hw_model_step(struct hw_model *m, const struct hw_step *s, struct hw_expect *out,
		  int max);
/* The bytes of a SEND: byte i of the payload seeded seed. */
static inline uint8_t
hw_payload(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 31u + i * 7u + 1u);
}

/* A CQ of one driver, fed by its own traffic source. */
struct hw_lane_conf {
	enum hw_driver driver;
	uint32_t mlx5_flags;    /* CQPOLL_MLX5_F_* */
	uint32_t size;          /* CQ entries; 0: 256 */
	struct ibv_comp_channel *channel; /* shared channel, or NULL */
	bool b_on_cq;           /* B's receive completions on the CQ too */
	bool a_off_cq;          /* A's requester completions elsewhere (with b_on_cq) */
	uint32_t recvs;         /* receives posted on B at the start */
	bool edge_emu;          /* emulated mlx5 only: the lazy (edge) arm */
};

struct hw_lane;
struct hw_target;

struct hw_target_ops {
	struct hw_lane *(*open)(struct hw_target *t, const struct hw_lane_conf *c,
				char *why, size_t len);
	struct cqpoll_cq *(*cq)(struct hw_lane *l);
	uint32_t (*qpn)(struct hw_lane *l, enum hw_side side);
	/*
	 * Run one step. e[0..ne) are the completions the model expects from
	 * it: a real device ignores them (it does the work), an emulated one
	 * writes them. 0 or -errno.
	 */
	int (*step)(struct hw_lane *l, const struct hw_step *s, const struct hw_expect *e,
		    int ne);
	/* Return once the completions of the steps so far are written. */
	void (*settle)(struct hw_lane *l);
	/* B's receive buffer of receive index k (a real device writes it), or NULL. */
	const uint8_t *(*recv_buf)(struct hw_lane *l, uint32_t k);
	void (*close)(struct hw_lane *l);
	struct ibv_comp_channel *(*channel_open)(struct hw_target *t);
	int (*channel_close)(struct hw_target *t, struct ibv_comp_channel *ch);
};

struct hw_target {
	const struct hw_target_ops *ops;
	char name[64];          /* ibv device name, or "emulated" */
	bool emulated;
	bool has_mlx5;          /* the mlx5 direct driver applies */
	struct ibv_context *ctx;  /* the device's, or the verbs-emu context */
};

/* Open dev as a target; 0, or -1 with why. */
int hw_target_ibv_open(struct hw_target *t, struct ibv_device *dev, char *why, size_t len);
void hw_target_ibv_close(struct hw_target *t);
/* The emulated mlx5 and verbs devices as one target; 0, or -1 with why. */
int hw_target_emu_open(struct hw_target *t, char *why, size_t len);
void hw_target_emu_close(struct hw_target *t);

/* A lane with its model: what a check drives. */
struct hw_run {
	struct hw_target *t;
	struct hw_lane *lane;
	struct cqpoll_cq *cq;
	struct hw_model model;
	enum hw_driver driver;
};

int hw_run_open(struct hw_run *r, struct hw_target *t, const struct hw_lane_conf *c,
		char *why, size_t len);
void hw_run_close(struct hw_run *r);
/* Run a step through the model and the target; expected completions appended to exp. */
int hw_run_step(struct hw_run *r, const struct hw_step *s, struct hw_expect *exp,
		int *nexp, int max);
/* Poll until n completions arrived or timeout_ms passed; the number read. */
int hw_run_collect(struct hw_run *r, struct cqpoll_completion *c, int n, int timeout_ms);
/*
 * Whether c is the completion e (its request, status and the fields valid
 * for it); 0, or -1 with why.
 */
int hw_match(const struct hw_run *r, const struct cqpoll_completion *c,
	     const struct hw_expect *e, char *why, size_t len);
/* The expected completion that c is, by side and order; NULL with why. */
const struct hw_expect *hw_pair(const struct hw_run *r, const struct cqpoll_completion *c,
				const struct hw_expect *exp, int nexp, uint32_t *seen,
				char *why, size_t len);

/* The loopback RC QP pair's plan (hw_loopback.c): pure, so the emulated run checks it. */
struct hw_port_view {
	bool active;
	bool ethernet;          /* link layer: RoCE (GIDs) or InfiniBand (LID) */
	uint16_t lid;
	enum ibv_mtu active_mtu;
	int gid_count;
	const union ibv_gid *gids;
};

struct hw_lb_plan {
	uint8_t port;
	int gid_index;          /* -1 on InfiniBand */
	enum ibv_mtu mtu;
	struct ibv_ah_attr ah;
};

int hw_lb_plan(const struct hw_port_view *pv, uint8_t port, struct hw_lb_plan *plan,
	       char *why, size_t len);
/* Attributes and mask of the transition to state (INIT, RTR or RTS). */
int hw_lb_attr(const struct hw_lb_plan *plan, enum ibv_qp_state state, uint32_t dest_qpn,
	       struct ibv_qp_attr *a);
/* RESET -> INIT -> RTR -> RTS toward dest_qpn; 0 or -errno with why. */
int hw_lb_connect(struct ibv_qp *qp, const struct hw_lb_plan *plan, uint32_t dest_qpn,
		  char *why, size_t len);
/* The plan for port of an open device: its first active port if port is 0. */
int hw_lb_plan_device(struct ibv_context *ctx, struct hw_lb_plan *plan, char *why,
		      size_t len);

/* A check: one function run per target (and per driver where it says so). */
struct hw_check {
	const char *name;
	const char *what;       /* one line for the report */
	void (*run)(struct hw_target *t, struct hw_result *r);
};

extern const struct hw_check *const hw_checks[];
extern const size_t hw_nchecks;

/*
 * --control=NAME: break what a check reads on purpose, so that the check is
 * seen to fail (its negative control): "swap-imm" hands the mlx5 driver's
 * immediates over byte-swapped, as a driver that forgot they are in network
 * order would; "vendor-err" flips a bit of its failed completions'
 * vendor_err, which only the comparison with the verbs driver can see;
 * "qp-wr-id" hands one wr_id of cqpoll's QP back wrong; "send-inv-rkey" the
 * invalidated rkey of a send with invalidate byte-swapped.
 */
extern const char *hw_control;

/* Log lines libcqpoll wrote while the checks ran (hw_main.c). */
void hw_log_capture_start(void);
size_t hw_log_count(void);
const char *hw_log_line(size_t i);

static inline void
hw_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

uint64_t hw_now_ns(void);
void hw_sleep_us(uint64_t us);

#endif /* HW_CHECK_H */
