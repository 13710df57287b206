/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll: the transition into sleep for a GROUP of CQs sharing one event fd
 * (CQs sharing a completion channel), checked with SPIN.
 *
 * One device process per CQ posts up to NPOST completions; one consumer runs
 * the loop the library runs (and the poll group will run):
 *
 *   busy: poll_burst() every CQ until a round finds all of them empty
 *         (interrupt mode polls only the active CQs: the model lets the
 *         consumer skip any inactive CQ, so it covers both)
 *   poll_and_arm() on every ACTIVE CQ of the group (cqpoll_group_run.c,
 *         cqpoll_poll_and_arm.c); a CQ for which it returns 0 becomes
 *         inactive (armed, empty): the group does not look at it again
 *   only if all returned 0: sleep on the shared fd (cqpoll_cq_wait)
 *   on wake: event_get() (consumes events, disarms their CQs and makes them
 *         active again), poll again
 *
 * Build with exactly one of -DARM_LEVEL, -DARM_EDGE, -DARM_REPORT_MISSED
 * (default edge), optionally -DNCQ=2|3 (default 2), -DNPOST=n (default 2),
 * and one of the broken transitions used as negative controls:
 *   -DNAIVE       poll, arm every CQ ignoring any report, sleep
 *                 (cqpoll_cq_arm_naive(): no re-poll after the arm)
 *   -DREPOLL_ONE  poll, arm every CQ ignoring any report, re-poll only the
 *                 first CQ, sleep (the bug fixed by apache/brpc PR #3425)
 *   -DNO_SLEEP_ASSERT  leave out the assertion at the sleep, so that a lost
 *                 wake-up shows as an invalid end state (the consumer blocked
 *                 on the fd forever with a completion in a CQ)
 * See doc/guides/model.md.
 *
 * Memory model: the sw device and cqpoll_sw_arm() pair a store, a seq_cst
 * fence and a load on each side (contract.md section 5), so the model
 * interleaves their steps sequentially consistently, one step per atomic
 * access of the C code that matters: the device's "entry visible" store, its
 * "load armed, exchange it to 0, raise" step, the arm's "store armed" and
 * its "load producer index" step, and each poll (a snapshot of the producer
 * index: entries become visible in order).
 */

#ifndef NCQ
#define NCQ 2
#endif
#ifndef NPOST
#define NPOST 2
#endif

#if !defined(ARM_LEVEL) && !defined(ARM_EDGE) && !defined(ARM_REPORT_MISSED)
#define ARM_EDGE
#endif

/* Device side of each CQ (struct cqpoll_sw_cq). */
byte pi[NCQ];          /* pi_vis: entries made visible by the device */
bool dev_armed[NCQ];   /* q->armed: the device holds an arm */
/* Consumer side of each CQ (struct cqpoll_cq). */
byte ci[NCQ];          /* consumer index: entries polled */
bool armed[NCQ];       /* cq->armed: the library's bit (contract.md s. 3) */
/* The group's active list (cqpoll_group_member::active): act[q] while CQ q
 * is on it. All start active. */
bool act[NCQ] = true;
/*
 * The shared fd: events pending on it, per CQ (a completion channel says which
 * CQ each event is for). The fd is readable while any is pending.
 */
byte ev[NCQ];
/* Ghosts, for the properties only. */
bool in_window[NCQ];   /* entry visible, device has not yet looked at armed */
byte ndone;            /* devices that posted their last completion */

#if NCQ == 2
#define FD_READABLE (ev[0] > 0 || ev[1] > 0)
#define ALL_EMPTY (pi[0] == ci[0] && pi[1] == ci[1])
#define ALL_ARMED (armed[0] && armed[1])
#define COVERED(i) (pi[i] == ci[i] || (dev_armed[i] && in_window[i]))
#define ALL_COVERED (COVERED(0) && COVERED(1))
#elif NCQ == 3
#define FD_READABLE (ev[0] > 0 || ev[1] > 0 || ev[2] > 0)
#define ALL_EMPTY (pi[0] == ci[0] && pi[1] == ci[1] && pi[2] == ci[2])
#define ALL_ARMED (armed[0] && armed[1] && armed[2])
#define COVERED(i) (pi[i] == ci[i] || (dev_armed[i] && in_window[i]))
#define ALL_COVERED (COVERED(0) && COVERED(1) && COVERED(2))
#else
#error "NCQ must be 2 or 3"
#endif

/*
 * The device: cqpoll_sw_post() in drivers/sw/sw_post.c. Publish the entry,
 * then (after the fence) look at the arm; if armed, claim it (atomic
 * exchange, one-shot) and raise an event on the shared fd (cqpoll_sw_raise).
 */
inline cqpoll_sw_post(q)
{
	/* store entry, owner bit, pi_vis (release) */
	atomic { pi[q]++; in_window[q] = true };
	/* fence(seq_cst); load armed; if 1, exchange it to 0 and raise */
	atomic {
		if
		:: dev_armed[q] -> dev_armed[q] = false; ev[q] = 1
		:: else -> skip
		fi;
		in_window[q] = false
	}
}

proctype device(byte q)
{
	do
	:: pi[q] < NPOST -> cqpoll_sw_post(q)	/* pi[q]: posted so far */
#ifdef EARLY_STOP
	:: break	/* posts 0 .. NPOST completions */
#endif
	:: else -> break
	od;
	ndone++
}

/*
 * cqpoll_poll_burst(): read every visible entry; r = number read. Entries
 * become visible in order, so a poll reads them up to a snapshot of pi_vis.
 * Used inside the consumer's atomic steps, which fold its local bookkeeping
 * into the shared access it follows (fewer states, same interleavings of
 * shared accesses).
 */
inline poll_burst(q, r)
{
	r = pi[q] - ci[q];
	ci[q] = pi[q]
}

/*
 * The arm: cqpoll_sw_arm() in drivers/sw/sw_arm.c, behind arm_device() in
 * lib/cqpoll/cqpoll_poll_and_arm.c. arm_device_store is "store armed = 1";
 * arm_device_check is "fence(seq_cst); load pi_vis" and what each semantics
 * does with it. a = 1 means "missed: poll again".
 */
inline arm_device_store(q)
{
	dev_armed[q] = true
}

inline arm_device_check(q, a)
{
#if defined(ARM_LEVEL)
	/* Entries past the armed index fire at once, as mlx5 does. */
	if
	:: pi[q] != ci[q] && dev_armed[q] -> dev_armed[q] = false; ev[q] = 1
	:: else -> skip
	fi;
	a = 0
#elif defined(ARM_REPORT_MISSED)
	if
	:: pi[q] != ci[q] ->
		a = 1;
		/* The contract leaves the arm state undefined: model both. */
		if
		:: skip			/* report_missed_keeps_armed */
		:: dev_armed[q] = false	/* not armed */
		fi
	:: else -> a = 0
	fi
#else
	/* Edge: entries already there are ignored. */
	a = 0
#endif
}

#if !defined(NAIVE) && !defined(REPOLL_ONE)
/*
 * cqpoll_poll_and_arm(), lib/cqpoll/cqpoll_poll_and_arm.c, on CQ q; adds
 * what it returns to n, then moves q to the next CQ.
 */
inline poll_and_arm(q, r, a, n)
{
	atomic {
		if
		:: !act[q] -> r = 0; goto poll_and_arm_ret	/* skipped: armed */
		:: else -> skip
		fi;
		poll_burst(q, r);
		if
		:: r != 0 -> goto poll_and_arm_ret	/* entries: return them */
		:: r == 0 && armed[q] -> goto poll_and_arm_ret	/* arm in force */
		:: else -> skip
		fi
	};
arm_device:
	arm_device_store(q);
	atomic {
		arm_device_check(q, a);
		if
		:: a == 0 ->
			armed[q] = true;
#if defined(ARM_EDGE)
			goto edge_repoll
#else
			goto poll_and_arm_ret
#endif
		:: else -> a = 0	/* missed: not armed until an arm says so */
		fi
	};
	atomic {
		poll_burst(q, r);
		if
		:: r != 0 -> goto poll_and_arm_ret
		:: else -> goto arm_device
		fi
	};
edge_repoll:
	/* Edge: the last poll that can find a silent entry. */
	atomic { poll_burst(q, r) };
poll_and_arm_ret:
	/* Returned 0: empty and armed; cqpoll_group_deactivate(). */
	atomic {
		if
		:: r == 0 -> act[q] = false
		:: else -> skip
		fi;
		n = n + r; r = 0; q++
	}
}
#else
/*
 * Broken transitions: arm as code written for ibv_req_notify_cq() does:
 * cqpoll_cq_arm_naive() ignores a report and believes the arm.
 */
inline arm_naive(q, a)
{
	arm_device_store(q);
	atomic { arm_device_check(q, a); a = 0; armed[q] = true; q++ }
}
#endif

/*
 * cqpoll_cq_event_get() on the CQs with events: consume at least one (the fd
 * was readable), maybe more; each consumed event disarms its CQ. k counts.
 */
inline event_get(k)
{
	do
	:: atomic { ev[0] > 0 -> ev[0] = 0; armed[0] = false; act[0] = true; k++ }
	:: atomic { ev[1] > 0 -> ev[1] = 0; armed[1] = false; act[1] = true; k++ }
#if NCQ == 3
	:: atomic { ev[2] > 0 -> ev[2] = 0; armed[2] = false; act[2] = true; k++ }
#endif
	:: atomic { k > 0 -> k = 0; break }	/* the rest stay pending */
	od
}

active proctype consumer()
{
	byte q, r, n;
	bit a;

busy_poll:
	/* The busy phase: poll_burst every CQ until a round finds none. */
	do
	:: atomic {
		q < NCQ -> poll_burst(q, r); n = n + r; r = 0; q++;
		if
		:: q == NCQ && n > 0 -> q = 0; n = 0	/* process, poll again */
		:: else -> skip
		fi
	   }
	/* Interrupt mode: an inactive CQ is not polled. */
	:: atomic { q < NCQ && !act[q] -> q++ }
	:: q == NCQ -> q = 0; break
	od;

	/* All empty: the transition into sleep, on every CQ of the group. */
#if !defined(NAIVE) && !defined(REPOLL_ONE)
	do
	:: q < NCQ -> poll_and_arm(q, r, a, n)
	:: q == NCQ -> q = 0; break
	od;
#else
	do
	:: q < NCQ -> arm_naive(q, a)
	:: q == NCQ -> q = 0; break
	od;
#if defined(REPOLL_ONE)
	/* Re-poll after the arms, but only the first CQ of the group. */
	atomic { poll_burst(0, r); n = r; r = 0 };
#endif
#endif
	if
	:: n > 0 -> n = 0; goto busy_poll	/* process, then busy poll again */
	:: else -> skip
	fi;

cqpoll_cq_wait:
	/* The library sleeps only when every CQ of the group is armed. */
	assert(ALL_ARMED);
#ifndef NO_SLEEP_ASSERT
	/*
	 * No lost wake-up: an event is pending on the fd, or every CQ is empty
	 * or will raise an event for its entries (its device saw the arm).
	 */
	assert(FD_READABLE || ALL_COVERED);
#endif
	/*
	 * Block on the shared fd. Not an end state: blocking here forever is a
	 * lost wake-up, unless every device is done and every completion was
	 * consumed, which is the only way out other than an event.
	 */
	if
	:: FD_READABLE -> skip
	:: ndone == NCQ && ALL_EMPTY -> goto end_idle
	fi;
	event_get(q);
	goto busy_poll;

end_idle:
	skip
}

init
{
	byte i = 0;

	atomic {
		do
		:: i < NCQ -> run device(i); i++
		:: else -> break
		od
	}
}
