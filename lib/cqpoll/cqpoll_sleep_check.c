/* SPDX-License-Identifier: BSD-3-Clause */
/* The registered sleep check, and how the sleeps of the library ask it. */

#include <errno.h>
#include <stddef.h>

#include "cqpoll_private.h"

const struct cqpoll_sleep_check *cqpoll_sleep_check_current;

int
cqpoll_sleep_check_register(const struct cqpoll_sleep_check *check)
{
	if (check != NULL && check->check == NULL)
		return -EINVAL;
	__atomic_store_n(&cqpoll_sleep_check_current, check, __ATOMIC_RELEASE);
	return 0;
}
