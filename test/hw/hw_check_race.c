/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Races aimed at the window between the last empty poll and the arm, on the
 * device's own interrupts: a generator thread posts the moment the consumer
 * opens the window, and the consumer waits a random 0..2W ns before it
 * transitions (every other round once the post returned), so the completion
 * lands before, inside and after the transition. cqpoll_poll_and_arm() must
 * never sleep past a completion; the naive transition (arm with no poll
 * after it) is the negative control: on an edge arm it must be caught
 * sleeping past one (the safety-net timeout then finds it), else the check
 * proves nothing. On a level arm (mlx5) the naive transition loses nothing
 * either: that is the level claim, under race.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cqpoll_emu.h"
#include "hw_check.h"

/*
 * The window is swept over 0..2W. A timeout counts as a lost wake-up only if
 * the post had returned MARGIN before the sleep began (a real device writes
 * the CQE microseconds after the post); a generator late for its round
 * (preempted on a busy machine) is counted apart. On the emulated devices
 * the oracle (libcqpoll_emu's sleep check) judges instead: it knows whether
 * an event was due, where a device thread preempted past the timeout would
 * look like a loss to the clock.
 */
#define WINDOW_EMU_NS 20000u
#define WINDOW_HW_NS 100000u
#define MARGIN_HW_NS 20000u
#define WAIT_EMU_MS 10
#define WAIT_HW_MS 100
#define NAIVE_ENOUGH 5

struct race {
	struct hw_run run;
	atomic_uint window;
	atomic_uint posted;          /* round of the last post */
	_Atomic uint64_t posted_ns;  /* when its post returned */
	atomic_int stop;
	atomic_int err;
};

static void *
generator(void *arg)
{
	static const struct hw_step s = { .kind = HW_STEP_SEND, .len = 8 };
	struct race *rc = arg;
	unsigned int last = 0, w;
	struct hw_expect e[2];
	int ne, r;

	while (!atomic_load_explicit(&rc->stop, memory_order_acquire)) {
		w = atomic_load_explicit(&rc->window, memory_order_acquire);
		if (w == last) {
			hw_cpu_relax();
			continue;
		}
		last = w;
		ne = 0;
		r = hw_run_step(&rc->run, &s, e, &ne, 2);
		if (r != 0)
			atomic_store(&rc->err, r);
		atomic_store_explicit(&rc->posted_ns, hw_now_ns(), memory_order_relaxed);
		atomic_store_explicit(&rc->posted, w, memory_order_release);
	}
	return NULL;
}

static void
spin_ns(uint64_t ns)
{
	uint64_t end = hw_now_ns() + ns;

	while (hw_now_ns() < end)
		hw_cpu_relax();
}

struct race_out {
	unsigned int rounds, lost, in_transition, events, late;
};

/*
 * Rounds on one lane; its QP pair serves fewer sends than its send queue
 * holds: on an mlx5 CQ polled directly, the provider never retires the
 * QP's WQEs (its tail moves only in its own poll), so a queue posted past
 * its depth would refuse.
 */
#define SEGMENT 100

static int
race_seg(struct hw_target *t, enum hw_driver d, bool edge_emu, bool naive,
	 unsigned int first, unsigned int rounds, struct race_out *o, char *why,
	 size_t len)
{
	struct hw_lane_conf conf = { .driver = d, .edge_emu = edge_emu };
	struct cqpoll_completion c[4];
	struct race rc;
	pthread_t th;
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)first << 32), sleep_ns;
	uint64_t window = t->emulated ? WINDOW_EMU_NS : WINDOW_HW_NS;
	uint64_t margin = t->emulated ? 0 : MARGIN_HW_NS, oracle = 0;
	int wait_ms = t->emulated ? WAIT_EMU_MS : WAIT_HW_MS;
	struct cqpoll_cq_stats st;
	unsigned int i;
	int n, w, ret = 0;

	memset(&rc, 0, sizeof(rc));
	if (hw_run_open(&rc.run, t, &conf, why, len) != 0)
		return -1;
	if (pthread_create(&th, NULL, generator, &rc) != 0) {
		snprintf(why, len, "pthread_create failed");
		hw_run_close(&rc.run);
		return -1;
	}
	for (i = first; i < first + rounds; i++) {
		if (cqpoll_poll_burst(rc.run.cq, c, 4) != 0) {
			snprintf(why, len, "round %u: the CQ was not empty", i);
			ret = -1;
			break;
		}
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		atomic_store_explicit(&rc.window, i, memory_order_release);
		/*
		 * Every other round waits for the post first, so that the
		 * completion is in the window even when the generator shares
		 * the consumer's CPU; the others leave it to chance.
		 */
		if (i % 2 == 0) {
			uint64_t end = hw_now_ns() + 100000000ull;

			while (atomic_load_explicit(&rc.posted, memory_order_acquire) != i &&
			       hw_now_ns() < end)
				hw_cpu_relax();
		}
		spin_ns(seed % (2 * window));
		if (naive) {
			cqpoll_cq_arm_naive(rc.run.cq);
			n = 0;
		} else {
			n = cqpoll_poll_and_arm(rc.run.cq, c, 4);
		}
		if (n > 0) {
			o->in_transition++;
		} else if (n == 0) {
			sleep_ns = hw_now_ns();
			w = cqpoll_cq_wait(rc.run.cq, wait_ms);
			if (w == 1)
				o->events++;
			n = hw_run_collect(&rc.run, c, 1, 1000);
			if (n != 1) {
				snprintf(why, len, "round %u: the completion never came", i);
				ret = -1;
				break;
			}
			cqpoll_cq_stats_get(rc.run.cq, &st);
			/* Slept the whole timeout while it was there: a lost wake-up. */
			if (t->emulated) {
				if (st.lost_wakeups != oracle)
					o->lost++;
				else if (w == 0)
					o->late++;
				oracle = st.lost_wakeups;
			} else if (w == 0 &&
			    atomic_load_explicit(&rc.posted, memory_order_acquire) == i &&
			    atomic_load_explicit(&rc.posted_ns, memory_order_relaxed) + margin <
			    sleep_ns)
				o->lost++;
			else if (w == 0)
				o->late++;
		} else {
			snprintf(why, len, "round %u: poll-and-arm: %d", i, n);
			ret = -1;
			break;
		}
		o->rounds++;
		if (naive && o->lost >= NAIVE_ENOUGH)
			break;
	}
	atomic_store_explicit(&rc.stop, 1, memory_order_release);
	pthread_join(th, NULL);
	if (ret == 0 && atomic_load(&rc.err) != 0) {
		snprintf(why, len, "posting failed: %s", strerror(-atomic_load(&rc.err)));
		ret = -1;
	}
	hw_run_close(&rc.run);
	return ret;
}

static int
race_one(struct hw_target *t, enum hw_driver d, bool edge_emu, bool naive,
	 unsigned int rounds, struct race_out *o, char *why, size_t len)
{
	unsigned int done;

	memset(o, 0, sizeof(*o));
	for (done = 0; done < rounds; done += SEGMENT) {
		if (race_seg(t, d, edge_emu, naive, done + 1, SEGMENT, o, why, len) != 0)
			return -1;
		if (naive && o->lost >= NAIVE_ENOUGH)
			break;
	}
	return 0;
}

struct variant {
	const char *name;
	enum hw_driver d;
	bool edge_emu;
	bool edge;
};

static int
variants_of(const struct hw_target *t, struct variant *v)
{
	int n = 0;

	if (t->has_mlx5)
		v[n++] = (struct variant){ "mlx5", HW_DRV_MLX5, false, false };
	/* The emulated mlx5 device's lazy arm: an edge arm under the mlx5 driver. */
	if (t->emulated)
		v[n++] = (struct variant){ "mlx5-lazy", HW_DRV_MLX5, true, true };
	v[n++] = (struct variant){ "verbs", HW_DRV_VERBS, false, true };
	return n;
}

static void
race(struct hw_target *t, struct hw_result *r, bool naive)
{
	unsigned int rounds = t->emulated ? 1000 : 2000;
	struct variant v[3];
	struct race_out o;
	char why[256], key[64];
	int nv = variants_of(t, v), i;

	for (i = 0; i < nv; i++) {
		if (race_one(t, v[i].d, v[i].edge_emu, naive, rounds, &o, why,
			     sizeof(why)) != 0) {
			hw_fail(r, "%s: %s", v[i].name, why);
			return;
		}
		snprintf(key, sizeof(key), "%s_rounds", v[i].name);
		hw_data_u64(r, key, o.rounds);
		snprintf(key, sizeof(key), "%s_lost", v[i].name);
		hw_data_u64(r, key, o.lost);
		snprintf(key, sizeof(key), "%s_in_transition", v[i].name);
		hw_data_u64(r, key, o.in_transition);
		snprintf(key, sizeof(key), "%s_events", v[i].name);
		hw_data_u64(r, key, o.events);
		snprintf(key, sizeof(key), "%s_late_posts", v[i].name);
		hw_data_u64(r, key, o.late);
		if (!naive && o.lost != 0) {
			hw_fail(r, "%s: poll-and-arm slept past %u completion(s) in %u rounds",
				v[i].name, o.lost, o.rounds);
			return;
		}
		if (naive && v[i].edge && o.lost == 0) {
			hw_fail(r, "%s: the naive transition was never caught in %u rounds: "
				"the race is not reached, the check proves nothing", v[i].name,
				o.rounds);
			return;
		}
		if (naive && !v[i].edge && o.lost != 0) {
			hw_fail(r, "%s: the level arm lost %u wake-up(s) to the naive transition: "
				"the level claim does not hold under race", v[i].name, o.lost);
			return;
		}
	}
	if (naive)
		hw_pass(r, "naive transition caught on every edge arm%s", t->has_mlx5 ?
			"; the mlx5 level arm lost nothing to it" : "");
	else
		hw_pass(r, "no completion slept past on %d arm(s), %u rounds each", nv, rounds);
}

static void
race_poll_and_arm(struct hw_target *t, struct hw_result *r)
{
	race(t, r, false);
}

static void
race_naive(struct hw_target *t, struct hw_result *r)
{
	race(t, r, true);
}

const struct hw_check hw_check_race = {
	"race-poll-and-arm", "aimed races into poll-arm-sleep: cqpoll_poll_and_arm()",
	race_poll_and_arm };
const struct hw_check hw_check_race_naive = {
	"race-naive", "the same races, naive transition (negative control)", race_naive };
