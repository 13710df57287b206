/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MUTANT_H
#define CQPOLL_MUTANT_H

/*
 * Mutants: the naive variants of library code that the negative controls of
 * test/ must catch (a test must be able to fail). A mutant replaces a whole
 * static function: the library source defines it twice, under
 * "#if CQPOLL_MUTANT(NAME)" and its "#else", never inside a function body
 * (devtools/check-layout.sh checks it). Every mutant is 0 here, so
 * libcqpoll (shared and static, installed or not) compiles none of them.
 * Only the test-only static libraries of test/mutants/meson.build turn one
 * on, with -DCQPOLL_MUTANT_<NAME>=1, and link it into their control
 * programs.
 */

/* A sw shared channel drains its fd after taking its fired list. */
#ifndef CQPOLL_MUTANT_CHANNEL_NAIVE
#define CQPOLL_MUTANT_CHANNEL_NAIVE 0
#endif
/* A cold CQ is armed without the poll that closes the race. */
#ifndef CQPOLL_MUTANT_COLD_NAIVE
#define CQPOLL_MUTANT_COLD_NAIVE 0
#endif
/* Device-clock timestamps reach the policy as if they were host time. */
#ifndef CQPOLL_MUTANT_RAW_TO_POLICY
#define CQPOLL_MUTANT_RAW_TO_POLICY 0
#endif
/* A sleep's timeout recovers nothing and judges nothing. */
#ifndef CQPOLL_MUTANT_NO_SAFETY_NET
#define CQPOLL_MUTANT_NO_SAFETY_NET 0
#endif
/* One CQ's error stops its whole group. */
#ifndef CQPOLL_MUTANT_NO_ISOLATION
#define CQPOLL_MUTANT_NO_ISOLATION 0
#endif
/* A verbs context's async fd is left out of its CQs' wait. */
#ifndef CQPOLL_MUTANT_NO_ASYNC_WAIT
#define CQPOLL_MUTANT_NO_ASYNC_WAIT 0
#endif

/* The safety net does not ring the arm of a member it finds armed and empty. */
#ifndef CQPOLL_MUTANT_NO_NET_ARM_CHECK
#define CQPOLL_MUTANT_NO_NET_ARM_CHECK 0
#endif

/* Going to sleep polls and arms every member, not only the active ones. */
#ifndef CQPOLL_MUTANT_ARM_ALL
#define CQPOLL_MUTANT_ARM_ALL 0
#endif

/* The health check and the busy loop's net walk their slice in one iteration. */
#ifndef CQPOLL_MUTANT_HOUSEKEEPING_AT_ONCE
#define CQPOLL_MUTANT_HOUSEKEEPING_AT_ONCE 0
#endif

/* A group moved between threads loses which of its members are armed. */
#ifndef CQPOLL_MUTANT_NAIVE_MOVE
#define CQPOLL_MUTANT_NAIVE_MOVE 0
#endif

/* A group never checks its members' health on its timer, only at quiet timeouts. */
#ifndef CQPOLL_MUTANT_NO_HEALTH_CHECK
#define CQPOLL_MUTANT_NO_HEALTH_CHECK 0
#endif

/* cqpoll_cq_fail() leaves the event fd alone: a sleeper on the CQ sleeps on. */
#ifndef CQPOLL_MUTANT_NO_FAIL_WAKE
#define CQPOLL_MUTANT_NO_FAIL_WAKE 0
#endif

/* An mlx5 QP made to signal every send request asks no completion of unsignalled ones. */
#ifndef CQPOLL_MUTANT_NO_SIG_ALL
#define CQPOLL_MUTANT_NO_SIG_ALL 0
#endif
/*
 * An mlx5 requester completion frees only its own WQE's building blocks, not
 * those of the unsignalled WQEs posted before it.
 */
#ifndef CQPOLL_MUTANT_RETIRE_SIGNALED_ONLY
#define CQPOLL_MUTANT_RETIRE_SIGNALED_ONLY 0
#endif

/* A group's kick leaves a group asleep in its lone member's own wait asleep. */
#ifndef CQPOLL_MUTANT_NO_LONE_KICK
#define CQPOLL_MUTANT_NO_LONE_KICK 0
#endif

/*
 * The adaptive policy without its shortcuts (every histogram bucket weighed
 * by choose(), every empty poll decided in full): the reference its
 * decisions must equal (test policy-same-decisions).
 */
#ifndef CQPOLL_MUTANT_ADAPTIVE_FULL
#define CQPOLL_MUTANT_ADAPTIVE_FULL 0
#endif

/* The adaptive policy's empty-poll bound forgets the probe's clock. */
#ifndef CQPOLL_MUTANT_POLL_UNTIL_NO_PROBE
#define CQPOLL_MUTANT_POLL_UNTIL_NO_PROBE 0
#endif

/* A group's epoll sleep has neither its timeout nor its alarm. */
#ifndef CQPOLL_MUTANT_GROUP_NO_ALARM
#define CQPOLL_MUTANT_GROUP_NO_ALARM 0
#endif

/* The io_uring wait believes its alarm set and sleeps with no timeout. */
#ifndef CQPOLL_MUTANT_URING_NO_ALARM
#define CQPOLL_MUTANT_URING_NO_ALARM 0
#endif

/* poll-and-arm polls before it arms, even where the wake-up's poll drained. */
#ifndef CQPOLL_MUTANT_POLL_BEFORE_ARM
#define CQPOLL_MUTANT_POLL_BEFORE_ARM 0
#endif

/* An arm that succeeded is believed, though the CQ was reported failed. */
#ifndef CQPOLL_MUTANT_NO_STATE_AFTER_ARM
#define CQPOLL_MUTANT_NO_STATE_AFTER_ARM 0
#endif

/* The software CQ's poll gives the injected errno without a second look. */
#ifndef CQPOLL_MUTANT_SW_ERROR_NO_SECOND_LOOK
#define CQPOLL_MUTANT_SW_ERROR_NO_SECOND_LOOK 0
#endif

/* A failure reported from elsewhere is latched by any empty poll. */
#ifndef CQPOLL_MUTANT_LATCH_STALE_EMPTY
#define CQPOLL_MUTANT_LATCH_STALE_EMPTY 0
#endif

/* mlx5's SRQ frees a slot when it posts it, not when its completion comes. */
#ifndef CQPOLL_MUTANT_SRQ_FREE_AT_POST
#define CQPOLL_MUTANT_SRQ_FREE_AT_POST 0
#endif

/*
 * 1 in the test build of mutant @p name, else 0. Every name has its 0
 * above: devtools/check-layout.sh fails a switch that has none, which "#if"
 * would take for 0 without a word.
 */
#define CQPOLL_MUTANT(name) (CQPOLL_MUTANT_##name)

#endif /* CQPOLL_MUTANT_H */
