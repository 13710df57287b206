/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric driver over a real provider (ofi_rxm over tcp, loopback): the
 * report-missed arm (fi_trywait) with the naive transition as negative
 * control, error completions with the provider's message, bad arguments.
 * Skips (77) where the provider is unavailable.
 */

#include <errno.h>
#include <poll.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_sw.h"
#include "cq_event_test.h"
#include "cqpoll_test.h"
#include "ofi_test.h"

static struct test_ofi ofi;

static struct cqpoll_cq *
open_cq(void)
{
	struct cqpoll_cq *cq = cqpoll_ofi_cq_open(ofi.fabric, ofi.domain, NULL);
	char why[256];

	if (cq == NULL)
		return NULL;
	if (test_ofi_attach(&ofi, cqpoll_ofi_cq_fid(cq), why, sizeof(why)) != 0) {
		fprintf(stderr, "%s\n", why);
		cqpoll_cq_destroy(cq);
		return NULL;
	}
	return cq;
}

static void
close_cq(struct cqpoll_cq *cq)
{
	/* The endpoints go with the CQ they are bound to. */
	if (ofi.ep_b != NULL)
		fi_close(&ofi.ep_b->fid);
	ofi.ep_b = NULL;
	cqpoll_cq_destroy(cq);
}

/* A completion written into the CQ while the consumer was busy. */
static int
complete_silently(uint64_t wr_id)
{
	int i;

	TEST_ASSERT_EQ(test_ofi_post(&ofi, wr_id, 64), 0);
	/*
	 * The consumer's own progress of B, through B's other CQ, moves the
	 * message from its socket into the CQ: no event is raised for it.
	 */
	for (i = 0; i < 1000; i++)
		test_ofi_progress_b(&ofi);
	return TEST_PASS;
}

enum transition { CORRECT, NAIVE };

static int
sleep_after_pending(enum transition t, int *lost)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq = open_cq();
	int r;

	TEST_ASSERT(cq != NULL, "open: %s", strerror(errno));
	TEST_ASSERT_EQ(complete_silently(2), TEST_PASS);
	if (t == NAIVE) {
		TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
	} else {
		r = cqpoll_poll_and_arm(cq, c, 4);
		TEST_ASSERT_EQ(r, 1);
		TEST_ASSERT_EQ(c[0].wr_id, 2);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	}
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	/* The naive arm found the completion there and said so (-FI_EAGAIN). */
	if (t == NAIVE)
		TEST_ASSERT_EQ(st.missed_reports, 1);
	/* Sleeping now: is there a completion and no event to end the sleep? */
	*lost = !test_cq_event_within(cq, 0) && cqpoll_poll_burst(cq, c, 4) == 1;
	close_cq(cq);
	return TEST_PASS;
}

/* fi_trywait's report is obeyed by poll-and-arm, ignored by naive code. */
static int
test_report_missed(void)
{
	int lost = -1;

	TEST_ASSERT_EQ(sleep_after_pending(CORRECT, &lost), TEST_PASS);
	TEST_ASSERT(lost == 0, "poll-and-arm left a completion to sleep on");
	TEST_ASSERT_EQ(sleep_after_pending(NAIVE, &lost), TEST_PASS);
	TEST_ASSERT(lost == 1, "negative control: the naive transition must be caught");
	return TEST_PASS;
}

/* Armed, a message arrives: the wait ends by the event. */
static int
test_event(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = open_cq();
	int i;

	TEST_ASSERT(cq != NULL, "open: %s", strerror(errno));
	for (i = 0; i < 20; i++) {
		while (cqpoll_poll_and_arm(cq, c, 4) > 0)
			;
		TEST_ASSERT_EQ(test_ofi_post(&ofi, 100 + (uint64_t)i, 200), 0);
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 2000), 1);
		while (cqpoll_poll_burst(cq, c, 4) == 0)
			;
		TEST_ASSERT_EQ(c[0].wr_id, 100 + (uint64_t)i);
		TEST_ASSERT_EQ(c[0].byte_len, 200);
		TEST_ASSERT_EQ(c[0].opcode, CQPOLL_OP_RECV);
		TEST_ASSERT_EQ(c[0].flags, CQPOLL_COMPLETION_F_WR_ID);
	}
	close_cq(cq);
	return TEST_PASS;
}

/* A receive too small for the message: an error entry, with its message. */
static int
test_error(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = open_cq();
	const char *msg;
	int r;

	TEST_ASSERT(cq != NULL, "open: %s", strerror(errno));
	msg = cqpoll_ofi_cq_strerror(cq);
	TEST_ASSERT(msg != NULL && msg[0] == '\0', "no error yet");
	TEST_ASSERT_EQ(test_ofi_post_room(&ofi, 7, 1000, 16), 0);
	while ((r = cqpoll_poll_burst(cq, c, 4)) == 0)
		;
	TEST_ASSERT_EQ(r, 1);
	TEST_ASSERT_EQ(c[0].wr_id, 7);
	TEST_ASSERT_EQ(c[0].status, CQPOLL_STATUS_LOC_LEN_ERR);
	msg = cqpoll_ofi_cq_strerror(cq);
	printf("  error completion: vendor_err %u, \"%s\"\n", c[0].vendor_err, msg);
	TEST_ASSERT(msg != NULL && msg[0] != '\0', "the provider's message");
	close_cq(cq);
	return TEST_PASS;
}

static int
test_bad_args(void)
{
	struct cqpoll_cq *sw = cqpoll_sw_cq_create(NULL);

	errno = 0;
	TEST_ASSERT(cqpoll_ofi_cq_open(NULL, ofi.domain, NULL) == NULL && errno == EINVAL,
		    "NULL fabric");
	errno = 0;
	TEST_ASSERT(cqpoll_ofi_cq_open(ofi.fabric, NULL, NULL) == NULL && errno == EINVAL,
		    "NULL domain");
	TEST_ASSERT(sw != NULL, "sw");
	TEST_ASSERT(cqpoll_ofi_cq_fid(sw) == NULL, "not an ofi CQ");
	TEST_ASSERT(cqpoll_ofi_cq_strerror(sw) == NULL, "not an ofi CQ");
	TEST_ASSERT(cqpoll_ofi_cq_fid(NULL) == NULL, "NULL");
	cqpoll_cq_destroy(sw);
	return TEST_PASS;
}

/* The size asked of libfabric is reported (it does not report its own). */
static int
test_info_size(void)
{
	struct cqpoll_ofi_conf conf = { .size = 256 };
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq;

	cq = cqpoll_ofi_cq_open(ofi.fabric, ofi.domain, NULL);
	TEST_ASSERT(cq != NULL, "open: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.size, CQPOLL_OFI_CQ_SIZE_DEFAULT);
	cqpoll_cq_destroy(cq);
	cq = cqpoll_ofi_cq_open(ofi.fabric, ofi.domain, &conf);
	TEST_ASSERT(cq != NULL, "open: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.size, 256);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_report_missed),
	TEST_CASE(test_info_size),
	TEST_CASE(test_event),
	TEST_CASE(test_error),
	TEST_CASE(test_bad_args),
};

int
main(void)
{
	char why[256];
	int r;

	if (test_ofi_open(&ofi, "tcp", why, sizeof(why)) != 0) {
		printf("skip: %s\n", why);
		test_ofi_close(&ofi);
		return TEST_SKIP;
	}
	r = test_run("ofi", cases, sizeof(cases) / sizeof(cases[0]));
	test_ofi_close(&ofi);
	return r;
}
