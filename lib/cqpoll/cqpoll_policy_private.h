/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_POLICY_PRIVATE_H
#define CQPOLL_POLICY_PRIVATE_H

/* What the built-in policies share. */

#include <stddef.h>
#include <stdint.h>

#include "cqpoll_group.h"

/* Parse @len decimal digits at @s into @v, at most @max: 0 or -EINVAL. */
int cqpoll_policy_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *v);

#endif /* CQPOLL_POLICY_PRIVATE_H */
