/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_ALLOC_PRIVATE_H
#define CQPOLL_ALLOC_PRIVATE_H

/*
 * Memory of objects placed on a NUMA socket. Each block records which
 * allocator gave it, so a hook installed later never frees it.
 */

#include <stddef.h>

#include "cqpoll_alloc.h"

/*
 * @size zeroed bytes, 64-aligned: the C library's for CQPOLL_SOCKET_ANY,
 * else the hook's or libnuma's on @socket_id. NULL with errno: EINVAL (no
 * such socket, logged), ENOMEM.
 */
void *cqpoll_mem_alloc(size_t size, int socket_id);
/* Free what cqpoll_mem_alloc() returned; NULL is ignored. */
void cqpoll_mem_free(void *p);
/* 0 if @socket_id is CQPOLL_SOCKET_ANY or exists, else -EINVAL (logged). */
int cqpoll_socket_check(int socket_id, const char *what);

#endif /* CQPOLL_ALLOC_PRIVATE_H */
