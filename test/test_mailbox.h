/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_MAILBOX_H
#define TEST_MAILBOX_H

/*
 * How the move tests hand a poll group from one runner thread to another:
 * a mailbox per runner, its mail under a lock, and an eventfd in the
 * runner's epoll set so that mail wakes a runner asleep on its groups.
 * (testpmd-cq's poller has its own: app code includes no test code.)
 */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* Groups in one mailbox at most: every group of a test. */
#define TEST_MAIL_MAX 16

/* A group handed over, and whether it travels in a prepared sleep. */
struct test_mail {
	unsigned int gi;
	int asleep;
};

struct test_mailbox {
	int fd;                 /* eventfd, nonblocking: mail arrived */
	pthread_mutex_t lock;
	struct test_mail mail[TEST_MAIL_MAX];
	unsigned int n;
};

/* An empty mailbox; 0 or a negative errno (no eventfd). */
static inline int
test_mailbox_init(struct test_mailbox *mb)
{
	mb->n = 0;
	mb->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (mb->fd < 0)
		return -errno;
	pthread_mutex_init(&mb->lock, NULL);
	return 0;
}

/* Post @p m and wake the owner; any thread. Aborts when full or unwakeable. */
static inline void
test_mailbox_send(struct test_mailbox *mb, struct test_mail m)
{
	uint64_t one = 1;

	pthread_mutex_lock(&mb->lock);
	if (mb->n == TEST_MAIL_MAX)
		abort();
	mb->mail[mb->n++] = m;
	pthread_mutex_unlock(&mb->lock);
	if (write(mb->fd, &one, sizeof(one)) != sizeof(one))
		abort();
}

/*
 * The owner takes every mail into @p out (TEST_MAIL_MAX long), the wake-up
 * consumed first so that mail sent after it wakes the owner again. Returns
 * how many, or a negative errno if the eventfd could not be read.
 */
static inline int
test_mailbox_take(struct test_mailbox *mb, struct test_mail *out)
{
	unsigned int n;
	uint64_t v;

	if (read(mb->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&mb->lock);
	n = mb->n;
	memcpy(out, mb->mail, n * sizeof(out[0]));
	mb->n = 0;
	pthread_mutex_unlock(&mb->lock);
	return (int)n;
}

#endif /* TEST_MAILBOX_H */
