/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll: a poll group with a member whose device dies, checked with SPIN.
 *
 * Two CQs in one group, edge arms (a poll after the arm). CQ 0's device
 * posts NPOST completions. CQ 1's device posts up to NPOST and may die at
 * any moment (DEVICE_FATAL on mlx5): from then on it writes no CQE, fires
 * no completion event, and an arm of it is accepted and means nothing (the
 * doorbell of a dead device); its death is raised on the context's async
 * fd. What the library does (doc/guides/contract.md, section 11):
 *  - the async fd is in each member's wait (drivers/common/ibv/ibv_async.c,
 *    cqpoll_ibv_async_join()), so a sleeping group wakes on it;
 *  - the next event_get() of a member reads it (cqpoll_ibv_async_process()):
 *    the dead CQ is reported failed (cqpoll_cq_fail()) and its own eventfd
 *    written, so its fd is readable too;
 *  - a poll of a reported CQ delivers what it holds, and once it is drained
 *    fails (the state's errno): the group parks it (removes it, tells the
 *    failure callback) and goes on with the other;
 *  - every sleep has a timeout: the safety net polls every member.
 * Properties:
 *  - the group never sleeps on a dead member alone: whenever it goes to
 *    sleep, every dead member it still holds has a readable fd (the async
 *    event, or its eventfd): it wakes at once, not at the timeout;
 *  - a member is parked only when dead and drained: what it held before it
 *    died is delivered first; a healthy member is never parked;
 *  - at the end every completion of CQ 0 was delivered and the dead CQ is
 *    parked (a consumer asleep forever is an invalid end state: the timeout
 *    is only there while a device runs).
 * -DNO_ASYNC_WAKE: the async fd is not in the members' wait (what the C
 * negative control -DCQPOLL_TEST_NO_ASYNC_WAIT builds): it must fail.
 * Run by test/model/run_model.sh (MODEL=cqpoll_dead.pml); see
 * doc/guides/model.md.
 */

#define NCQ 2
#define DEAD 1
#ifndef NPOST
#define NPOST 2
#endif

byte pi[NCQ];          /* entries made visible by the device */
byte ci[NCQ];          /* entries polled */
bool dev_armed[NCQ];   /* the device holds an arm */
bool armed[NCQ];       /* the library's bit */
bool act[NCQ] = true;  /* on the group's active list */
byte chn[NCQ];         /* completion events pending on q's fd */
bool in_window[NCQ];   /* entry visible, the device has not looked at the arm */
bool dead;             /* CQ 1's device died */
bool async_q;          /* an async event waits on the context's async fd */
bool reported;         /* cqpoll_cq_fail() on CQ 1: the core knows */
bool woken;            /* the async reader wrote CQ 1's eventfd */
bool parked[NCQ];      /* removed from the group, reported to the callback */
byte ndone;

#ifdef NO_ASYNC_WAKE
#define ASYNC_IN_WAIT false
#else
#define ASYNC_IN_WAIT async_q
#endif
/* q's fd: its events, its eventfd (CQ 1), the context's async fd. */
#define CQ_READABLE(q) (!parked[q] && (chn[q] > 0 || (q == DEAD && woken) || ASYNC_IN_WAIT))
#define FD_READABLE (CQ_READABLE(0) || CQ_READABLE(1))
#define COVERED(q) (pi[q] == ci[q] || (dev_armed[q] && in_window[q]))
#define SETTLED(q) (parked[q] || armed[q])

inline post(q)
{
	atomic { pi[q]++; in_window[q] = true };
	atomic {
		if
		:: dev_armed[q] -> dev_armed[q] = false; chn[q]++
		:: else -> skip
		fi;
		in_window[q] = false
	}
}

proctype healthy()
{
	do
	:: pi[0] < NPOST -> post(0)
	:: else -> break
	od;
	ndone++
}

proctype dying()
{
	do
	:: !dead && pi[DEAD] < NPOST -> post(DEAD)
	/* Dies: no CQE, no event from now on; the async event is raised. */
	:: atomic { !dead -> dead = true; dev_armed[DEAD] = false; async_q = true }
	:: dead -> break
	od;
	ndone++
}

/* The group removes a failed member: only a dead, drained one. */
inline park(q)
{
	assert(q == DEAD && dead && pi[q] == ci[q]);
	parked[q] = true; act[q] = false; armed[q] = false
}

/*
 * cqpoll_poll_burst(), and what the group does with an error: entries are
 * delivered; a reported CQ found drained fails, and is parked.
 */
inline poll(q, r)
{
	r = pi[q] - ci[q]; ci[q] = pi[q];
	if
	:: r == 0 && q == DEAD && reported -> park(q)
	:: else -> skip
	fi
}

/* cqpoll_poll_and_arm() on an active member; r: completions returned. */
inline poll_and_arm(q, r)
{
	atomic {
		poll(q, r);
		if
		:: r != 0 || parked[q] || armed[q] -> goto pa_ret
		:: else -> skip
		fi
	};
	/* The arm: a dead device takes the doorbell and does nothing. */
	atomic { dev_armed[q] = !(q == DEAD && dead); armed[q] = true };
	/* Edge: the poll after the arm. */
	atomic { poll(q, r) };
pa_ret:
	atomic {
		if
		:: r == 0 && !parked[q] -> act[q] = false
		:: else -> skip
		fi
	}
}

/*
 * cqpoll_cq_event_get() through the demux: the context's async events
 * first (routed: CQ 1 reported, its eventfd written), then q's own.
 */
inline event_get(q)
{
	atomic {
		if
		:: async_q -> async_q = false; reported = true; woken = true
		:: else -> skip
		fi;
		if
		:: chn[q] > 0 || (q == DEAD && (woken || reported)) ->
			chn[q] = 0;
			if
			:: q == DEAD -> woken = false
			:: else -> skip
			fi;
			armed[q] = false; act[q] = true
		:: else -> skip
		fi
	}
}

active proctype consumer()
{
	byte q, r, n;
	bool ready[NCQ];

busy:
	/* Poll the members it holds (interrupt mode: the active ones only). */
	do
	:: atomic { q < NCQ && !parked[q] -> poll(q, r); n = n + r; r = 0; q++ }
	:: atomic { q < NCQ && (parked[q] || !act[q]) -> q++ }
	:: q == NCQ -> q = 0; break
	od;
	if
	:: n > 0 -> n = 0; goto busy
	:: else -> skip
	fi;
	/* The transition over the active members. */
	do
	:: q < NCQ && act[q] && !parked[q] -> poll_and_arm(q, r); n = n + r; r = 0; q++
	:: atomic { q < NCQ && (!act[q] || parked[q]) -> q++ }
	:: q == NCQ -> q = 0; break
	od;
	if
	:: n > 0 -> n = 0; goto busy
	:: else -> skip
	fi;
	assert(SETTLED(0) && SETTLED(1));
	/* No lost wake-up on the healthy member. */
	assert(FD_READABLE || parked[0] || COVERED(0));
	/* Never asleep on a dead member alone: its fd wakes the group now. */
	assert(!dead || parked[DEAD] || CQ_READABLE(DEAD));
	if
	:: atomic {
		FD_READABLE ->
		do
		:: q < NCQ -> ready[q] = CQ_READABLE(q); q++
		:: else -> q = 0; break
		od
	   }
	/* The safety net: every member polled (a group of two). */
	:: atomic {
		!FD_READABLE && ndone < 2 ->
		do
		:: q < NCQ && !parked[q] ->
			poll(q, r);
			if
			:: r > 0 -> armed[q] = false; act[q] = true
			:: else -> skip
			fi;
			r = 0; q++
		:: q < NCQ && parked[q] -> q++
		:: else -> q = 0; break
		od
	   };
	   goto busy
	:: ndone == 2 && pi[0] == ci[0] && parked[DEAD] -> goto end_idle
	fi;
	do
	:: q < NCQ && ready[q] -> ready[q] = false; event_get(q); q++
	:: q < NCQ && !ready[q] -> q++
	:: q == NCQ -> q = 0; break
	od;
	goto busy;

end_idle:
	skip
}

init
{
	atomic { run healthy(); run dying() }
}
