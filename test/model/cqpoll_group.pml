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
 *   poll_and_arm() on every ACTIVE CQ of the group (cqpoll_group_sleep.c,
 *         cqpoll_poll_and_arm.c); a CQ for which it returns 0 becomes
 *         inactive (armed, empty): the group does not look at it again
 *   only if all returned 0: sleep (epoll_wait over the CQs' event fds)
 *   on wake: event_get() on each CQ whose fd was ready, through the channel
 *         demux: events are read from the one completion channel in order,
 *         each is routed to the CQ it names (drivers/common/ibv/ibv_channel.c);
 *         a CQ whose event was consumed is disarmed and active again
 *   on timeout: the safety net (cqpoll_group_net.c, safety_net()) polls the
 *         next slice of CQs (one CQ per timeout here, taking turns); one that
 *         holds entries while still believed armed had its event lost or
 *         late: its arm is spent (not armed, active again)
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
 *   -DTAKE_ANY    event_get() takes any event on the channel as its own CQ's
 *                 (the mlx5 hw_event_get bug of issue 9, item 1)
 * Faults and the safety net:
 *   -DLOSE=n      the devices lose up to n events in all (the arm is claimed,
 *                 no event is raised): only the safety net can recover; the
 *                 property is then "an entry visible when a sleep began is
 *                 consumed within NCQ timeouts" (assertion at each timeout)
 *   -DTIMEOUT_ACTIVE_ONLY  the old safety net: a timeout polls nothing more
 *                 than the mode does (the active list); with -DLOSE it fails
 *   -DNO_TIMEOUT  sleeps without a timeout (smaller state space: the 3-CQ
 *                 runs); not with -DLOSE
 * Hot and cold members (busy and adaptive modes, poll_hot() and
 * cqpoll_group_check_cold() in cqpoll_group_net.c):
 *   -DCOLD        the busy phase is the polling group's loop with hot and
 *                 cold CQs: each iteration polls every hot CQ once, and any
 *                 of them may be judged idle and go through poll_and_arm(),
 *                 leaving the hot set (cold and armed) if it returns 0; then
 *                 the non-blocking event check may run (it must when no CQ
 *                 is hot): event_get() through the demux on every CQ whose
 *                 fd is ready, a woken CQ is hot again; after a check the
 *                 busy-mode safety net may run (one per timeout), polling
 *                 every CQ cold for a whole timeout. An iteration that found
 *                 nothing may hand over to the transition into sleep
 *                 (adaptive mode's policy, or interrupt mode). Property: at
 *                 every event check each cold CQ is empty, about to raise,
 *                 or has its own event pending (with -DLOSE instead: an entry
 *                 visible at one run of the busy net is consumed by the next)
 *   -DCOLD_NAIVE  with -DCOLD: a CQ goes cold after an empty poll by a bare
 *                 arm that is believed (cqpoll_cq_arm_naive(), no poll after
 *                 the arm): what -DCQPOLL_TEST_COLD_NAIVE builds in C
 *   -DCOLD_NO_NET with -DCOLD -DLOSE: the busy-mode net polls nothing (what
 *                 -DCQPOLL_TEST_NO_SAFETY_NET builds in C)
 * Moving the group between threads (cqpoll_group_release() and
 * cqpoll_group_adopt(), cqpoll_group_move.c):
 *   -DMOVE        two consumer processes, two threads: the one that owns the
 *                 group runs the loop, the other is parked until it is handed
 *                 the group. The owner may hand it over at a safe point
 *                 (up to MAXMOVES times, default 2): between iterations,
 *                 in a prepared sleep before its wait, or after the wait
 *                 returned and before the events are taken (what an external
 *                 loop's wait found is not carried: the new thread waits
 *                 again). The new thread starts with fresh locals where the
 *                 group stands: polling, or in the sleep. What the group
 *                 holds (act[], the CQs' arms, the events on the channel)
 *                 is carried as it is. The properties are the same.
 *   -DNAIVE_MOVE  with -DMOVE: the move drops the armed state: the new
 *                 thread takes every member for armed (act[] cleared), as
 *                 a group moved asleep would be (what
 *                 -DCQPOLL_MUTANT_NAIVE_MOVE=1 builds in C)
 *   -DMOVE_LATE   with -DMOVE: moves only after the group's first sleep,
 *                 so that a naive move's counterexample is not merely the
 *                 fresh group whose members were never armed
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
 * The completion channel shared by the CQs: the events queued on it, counted
 * per CQ they name. ibv_get_cq_event() returns them in order; the demux reads
 * them in ANY order here (a superset of the FIFO's behaviours, with far fewer
 * states). A spent arm's late event may still be queued when its CQ is armed
 * again, so a CQ may have more than one.
 */
byte chn[NCQ];
/*
 * The demux: events read from the channel by one CQ's event_get() for another
 * CQ are counted for that CQ and signal its own eventfd, so its event fd (an
 * epoll fd over the channel fd and that eventfd) is readable too.
 */
byte routed[NCQ];
/* Events lost by the devices so far (-DLOSE). */
byte lost;
/* The group's safety net: where the next slice starts. */
byte net_next;
/*
 * Ghosts for the recovery property: pi[] when the current sleep began, and
 * how many timeouts in a row ended with entries from before their sleep
 * still in the CQ.
 */
byte vis[NCQ];
byte late[NCQ];
/* Ghosts, for the properties only. */
bool in_window[NCQ];   /* entry visible, device has not yet looked at armed */
byte ndone;            /* devices that posted their last completion */
#ifdef COLD
/*
 * The busy-mode safety net (cqpoll_group_check_cold() in cqpoll_group_net.c) polls, once
 * per timeout, the CQs cold for at least a whole timeout: old[q], "cold at
 * the net's previous run and cold ever since" (cleared when q goes cold
 * again). It may poll any other CQ too (hot ones, or CQs that went cold in a
 * transition with an old t_work): the C code does, in some timings.
 */
bool old[NCQ];
/* Ghost for -DLOSE: pi[] at the busy net's previous run. */
byte bvis[NCQ];
#endif

#ifdef MOVE
#ifndef MAXMOVES
#define MAXMOVES 2
#endif
bit owner;          /* the thread that runs the group now */
bool g_asleep;      /* handed over in a prepared sleep */
byte nmoves;        /* moves so far */
byte nthreads;      /* consumer processes started, for their ids */
bool slept;         /* ghost: the group slept once (-DMOVE_LATE) */
#endif
#if defined(NAIVE_MOVE) && !defined(MOVE)
#error "-DNAIVE_MOVE needs -DMOVE"
#endif

#ifndef LOSE
#define LOSE 0
#endif
#if LOSE > 0 && defined(NO_TIMEOUT)
#error "-DLOSE needs the timeout: nothing else recovers a lost event"
#endif
#if (defined(COLD_NAIVE) || defined(COLD_NO_NET)) && !defined(COLD)
#error "-DCOLD_NAIVE and -DCOLD_NO_NET need -DCOLD"
#endif
#if defined(COLD) && (defined(NAIVE) || defined(REPOLL_ONE))
#error "-DCOLD models the correct transition into sleep"
#endif

#if NCQ == 2
#define CH_READABLE (chn[0] > 0 || chn[1] > 0)
#define FD_READABLE (CQ_READABLE(0) || CQ_READABLE(1))
#define ALL_EMPTY (pi[0] == ci[0] && pi[1] == ci[1])
#define ALL_ARMED (armed[0] && armed[1])
#define COVERED(i) (pi[i] == ci[i] || (dev_armed[i] && in_window[i]))
#define ALL_COVERED (COVERED(0) && COVERED(1))
#define ANY_ACT (act[0] || act[1])
#define ALL_ACT (act[0] && act[1])
#define ALL_ANNOUNCED (ANNOUNCED(0) && ANNOUNCED(1))
#define DROP_ACT act[0] = false; act[1] = false
#elif NCQ == 3
#define CH_READABLE (chn[0] > 0 || chn[1] > 0 || chn[2] > 0)
#define FD_READABLE (CQ_READABLE(0) || CQ_READABLE(1) || CQ_READABLE(2))
#define ALL_EMPTY (pi[0] == ci[0] && pi[1] == ci[1] && pi[2] == ci[2])
#define ALL_ARMED (armed[0] && armed[1] && armed[2])
#define COVERED(i) (pi[i] == ci[i] || (dev_armed[i] && in_window[i]))
#define ALL_COVERED (COVERED(0) && COVERED(1) && COVERED(2))
#define ANY_ACT (act[0] || act[1] || act[2])
#define ALL_ACT (act[0] && act[1] && act[2])
#define ALL_ANNOUNCED (ANNOUNCED(0) && ANNOUNCED(1) && ANNOUNCED(2))
#define DROP_ACT act[0] = false; act[1] = false; act[2] = false
#else
#error "NCQ must be 2 or 3"
#endif

/* CQ i's event fd: the channel's fd, or its own eventfd of routed events. */
#define CQ_READABLE(i) (CH_READABLE || routed[i] > 0)
/*
 * A cold CQ's work is announced: none, or its device is about to raise for
 * it, or its own event is pending (queued on the channel, or routed to it),
 * so that the next event check wakes it. Hot CQs are polled anyway.
 */
#define ANNOUNCED(i) (act[i] || COVERED(i) || chn[i] > 0 || routed[i] > 0)

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
		:: dev_armed[q] -> dev_armed[q] = false; chn[q]++
#if LOSE > 0
		/* A lost event: the arm is claimed, nothing reaches the channel. */
		:: dev_armed[q] && lost < LOSE -> dev_armed[q] = false; lost++
#endif
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
	:: pi[q] != ci[q] && dev_armed[q] -> dev_armed[q] = false; chn[q]++
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
		:: r == 0 -> act[q] = false;
#ifdef COLD
			old[q] = false
#endif
		:: else -> skip
		fi;
		n = n + r; r = 0; q++
	}
}

#ifdef COLD_NAIVE
/*
 * poll_hot() built with -DCQPOLL_TEST_COLD_NAIVE: after the empty poll, a
 * bare arm that is believed whatever it reports, and the CQ is cold.
 */
inline arm_cold_naive(q, a)
{
	arm_device_store(q);
	atomic {
		arm_device_check(q, a); a = 0; armed[q] = true;
		act[q] = false; old[q] = false; q++
	}
}
#endif
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

/* One event read from the channel by q's event_get: q's own, or routed. */
inline channel_event(q, e, k)
{
#ifdef TAKE_ANY
	/* Broken: any event on the channel counts as q's. */
	k++
#else
	if
	:: e == q -> k++
	:: else -> routed[e]++
	fi
#endif
}

/*
 * cqpoll_cq_event_get(q) through the channel demux
 * (drivers/common/ibv/ibv_channel.c, cqpoll_ibv_channel_get()): take what
 * other CQs routed to q, then read the channel until it is empty, keeping q's
 * events and routing the others to their CQs. A CQ whose event was consumed
 * needs a new arm and is active again (the group's wake path). k: events
 * taken for q.
 *
 * One atomic step: the C code reads events one at a time, and a device may
 * raise one between two reads; but a read touches only the channel and the
 * consumer's counts, which no device step reads, so a device's raise between
 * reads gives the same states as the raise before the whole drain (the reads
 * move right past it). Only the raise's place relative to the drain matters,
 * and the model keeps both: before it, or after it (the event then stays on
 * the channel and its fd readable).
 */
inline event_get(q, e, k)
{
	atomic {
		k = routed[q]; routed[q] = 0;
		do
		:: chn[0] > 0 -> chn[0]--; e = 0; channel_event(q, e, k)
		:: chn[1] > 0 -> chn[1]--; e = 1; channel_event(q, e, k)
#if NCQ == 3
		:: chn[2] > 0 -> chn[2]--; e = 2; channel_event(q, e, k)
#endif
		:: !CH_READABLE -> break
		od;
		if
		:: k > 0 -> armed[q] = false; act[q] = true
		:: else -> skip
		fi;
		k = 0; e = 0
	}
}

/*
 * The safety net after a timeout: poll the next CQ of the slice (one per
 * timeout: with two or three CQs, "every CQ within NCQ timeouts" is the
 * property of the group's slices). Entries in a CQ still believed armed: its
 * event is lost or late, its arm is spent. Then the recovery property: an
 * entry visible when the sleep began is consumed within NCQ timeouts.
 */
inline safety_net(q, r)
{
	atomic {
#ifndef TIMEOUT_ACTIVE_ONLY
		q = net_next;
		poll_burst(q, r);
		if
		:: r > 0 -> armed[q] = false; act[q] = true
		:: else -> skip
		fi;
		net_next = (net_next + 1) % NCQ;
#endif
#if LOSE > 0
		q = 0;
		do
		:: q < NCQ ->
			if
			:: ci[q] < vis[q] -> late[q]++
			:: else -> late[q] = 0
			fi;
			assert(late[q] < NCQ);
			q++
		:: else -> break
		od;
#endif
		q = 0; r = 0
	}
}

#ifdef COLD
/*
 * The busy-mode safety net (check_cold(), safety_net_since()), once per
 * timeout: every CQ cold for a whole timeout is polled (old[q]), any other
 * may be. Entries in a CQ believed armed: its arm is spent, and the CQ is
 * hot again. Then, with -DLOSE, the recovery property: an entry visible at
 * the net's previous run has been consumed.
 */
inline busy_net(q, r, n)
{
	atomic {
		q = 0;
		do
		:: q < NCQ ->
#ifndef COLD_NO_NET
			if
			:: poll_burst(q, r);
				if
				:: r > 0 -> armed[q] = false; act[q] = true; n = n + r
				:: else -> skip
				fi
			:: !old[q] -> skip
			fi;
#endif
#if LOSE > 0
			assert(ci[q] >= bvis[q]);
			bvis[q] = pi[q];
#endif
			old[q] = !act[q];
			q++
		:: else -> break
		od;
		q = 0; r = 0
	}
}
#endif

#ifdef MOVE
#ifdef NAIVE_MOVE
#define MOVE_DROP DROP_ACT
#else
#define MOVE_DROP skip
#endif
#if NCQ == 2
#define CLEAR_READY ready[0] = false; ready[1] = false
#else
#define CLEAR_READY ready[0] = false; ready[1] = false; ready[2] = false
#endif
/*
 * The owner may hand the group over here (a safe point): the group's state
 * stays, the thread's locals do not (they are dead at a safe point; fresh
 * ones are zero), and the other thread takes it up where it stands.
 */
#ifdef MOVE_LATE
#define MOVE_ALLOWED (nmoves < MAXMOVES && slept)
#else
#define MOVE_ALLOWED (nmoves < MAXMOVES)
#endif
#define MOVE_POINT(asleep) \
	if \
	:: MOVE_ALLOWED -> \
		atomic { \
			nmoves++; g_asleep = asleep; MOVE_DROP; \
			q = 0; r = 0; n = 0; e = 0; k = 0; a = 0; CLEAR_READY; \
			owner = 1 - me \
		}; \
		goto parked \
	:: skip \
	fi
active [2] proctype consumer()
#else
active proctype consumer()
#endif
{
	byte q, r, n, e, k;
	bool ready[NCQ];
	bit a;
#ifdef COLD
	bit trans;	/* this pass over the hot CQs is the transition */
#endif
#ifdef MOVE
	bit me;

	atomic { me = nthreads; nthreads++ };
	if
	:: me != owner -> goto parked
	:: else -> skip
	fi;
#endif

busy_poll:
#ifdef MOVE
	/* Between iterations (not inside the transition a COLD pass is). */
#ifdef COLD
	if
	:: !trans -> MOVE_POINT(false)
	:: else -> skip
	fi;
#else
	MOVE_POINT(false);
#endif
#endif
#ifdef COLD
	/*
	 * One iteration of the polling group (poll_hot()): each hot CQ is
	 * polled, or judged idle and goes through poll_and_arm() (an empty
	 * poll before it changes nothing, so it is left out); 0 makes it cold.
	 * With trans set, the pass is the transition into sleep (transition()):
	 * poll_and_arm() on every hot CQ.
	 */
	do
	:: atomic { q < NCQ && !act[q] -> q++ }	/* cold: not polled */
	:: atomic { q < NCQ && act[q] && !trans -> poll_burst(q, r); n = n + r; r = 0; q++ }
#ifdef COLD_NAIVE
	:: atomic { q < NCQ && act[q] && !trans -> poll_burst(q, r) };
		if
		:: r == 0 -> arm_cold_naive(q, a)
		:: else -> atomic { n = n + r; r = 0; q++ }
		fi
	:: q < NCQ && act[q] && trans -> poll_and_arm(q, r, a, n)
#else
	:: q < NCQ && act[q] -> poll_and_arm(q, r, a, n)
#endif
	:: q == NCQ -> q = 0; break
	od;
	if
	:: trans ->
		/* The transition: sleep only if it found nothing. */
		trans = 0;
		if
		:: n > 0 -> n = 0; goto busy_poll
		:: else -> goto cqpoll_cq_wait
		fi
	:: else -> skip
	fi;
	/*
	 * check_cold(): the non-blocking event check, at any iteration while
	 * some CQ is hot (every ~10 us in C), at every one when none is.
	 */
	if
	:: ANY_ACT -> goto cold_done
	:: skip
	fi;
	atomic {
		do
		:: q < NCQ -> ready[q] = CQ_READABLE(q); q++
		:: else -> q = 0; break
		od;
#if LOSE == 0
		/* No lost wake-up: the work of every cold CQ is announced. */
		assert(ALL_ANNOUNCED)
#endif
	};
	do
	:: q < NCQ && ready[q] -> ready[q] = false; event_get(q, e, k); q++
	:: q < NCQ && !ready[q] -> q++
	:: q == NCQ -> q = 0; break
	od;
	/* After the events at hand, the net, while some CQ is cold. */
	if
	:: !ALL_ACT -> busy_net(q, r, n)
	:: skip
	fi;
cold_done:
	/*
	 * decide(): work found, or busy mode: poll on; an iteration that found
	 * nothing may go to the transition (adaptive's policy, interrupt mode).
	 */
	if
	:: n > 0 -> n = 0
	:: n == 0 -> skip
	:: n == 0 -> trans = 1
	fi;
	goto busy_poll;
#else
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
#endif /* COLD */

cqpoll_cq_wait:
	/* The library sleeps only when every CQ of the group is armed. */
	assert(ALL_ARMED);
#if LOSE > 0
	/* Ghost: what was visible when the sleep began. */
	atomic {
		do
		:: q < NCQ -> vis[q] = pi[q]; q++
		:: else -> q = 0; break
		od
	}
#endif
#if !defined(NO_SLEEP_ASSERT) && LOSE == 0
	/*
	 * No lost wake-up: an event is pending on the fd, or every CQ is empty
	 * or will raise an event for its entries (its device saw the arm).
	 */
	assert(FD_READABLE || ALL_COVERED);
#endif
#ifdef MOVE
	slept = true;
	/* A prepared sleep: moved asleep, the new thread does the wait. */
	MOVE_POINT(true);
sleep_wait:
#endif
	/*
	 * epoll_wait with the safety-net timeout. It returns the fds ready at
	 * that moment, or times out when none is. Without -DLOSE the model
	 * lets it time out only while a device is still running, so that a
	 * consumer asleep forever with a completion in a CQ is an invalid end
	 * state (the devices are done, nothing else can move); with -DLOSE the
	 * timeout is always there, and the assertion of safety_net() is the
	 * check.
	 */
	if
	:: atomic {
		FD_READABLE ->
		do
		:: q < NCQ -> ready[q] = CQ_READABLE(q); q++
		:: else -> q = 0; break
		od
	   }
#if LOSE > 0
	:: !FD_READABLE -> safety_net(q, r); goto busy_poll
#elif !defined(NO_TIMEOUT)
	:: !FD_READABLE && ndone < NCQ -> safety_net(q, r); goto busy_poll
#endif
	:: ndone == NCQ && ALL_EMPTY -> goto end_idle
	fi;
#ifdef MOVE
	/*
	 * The external loop's wait returned, the sleep is not finished: moved
	 * now, what that wait found is dropped and the new thread waits again.
	 */
	MOVE_POINT(true);
#endif
	/* Each ready CQ: event_get() through the demux, then poll (busy_poll). */
	do
	:: q < NCQ && ready[q] -> ready[q] = false; event_get(q, e, k); q++
	:: q < NCQ && !ready[q] -> q++
	:: q == NCQ -> q = 0; break
	od;
	goto busy_poll;

end_idle:
	skip;
#ifdef MOVE
	goto end_done;
	/* Not the owner: wait to be handed the group, then take it up. */
parked:
end_parked:
	atomic {
		owner == me ->
		if
		:: g_asleep -> g_asleep = false; goto sleep_wait
		:: else -> goto busy_poll
		fi
	};
end_done:
	skip
#endif
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
