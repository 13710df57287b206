/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory on a NUMA socket: the hook's, or libnuma's pages bound to the node.
 * A 64-byte header before each block says who allocated it and how much,
 * and keeps the block 64-aligned.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_alloc_private.h"
#include "cqpoll_config.h"
#include "cqpoll_log_private.h"

#if CQPOLL_HAVE_NUMA
#include <numa.h>
#else
/*
 * Built without libnuma (-Dnuma): the machine is taken as one node, 0, and
 * its memory comes from the C allocator, zeroed as libnuma's pages are.
 */
static int numa_available(void) { return -1; }
static int numa_max_node(void) { return 0; }
#define numa_all_nodes_ptr NULL
#define numa_bitmask_isbitset(mask, node) ((void)(mask), (void)(node), 0)
static void *
numa_alloc_onnode(size_t size, int node)
{
	void *p = aligned_alloc(64, (size + 63) & ~(size_t)63);

	(void)node;
	if (p != NULL)
		memset(p, 0, size);
	return p;
}
static void
numa_free(void *p, size_t size)
{
	(void)size;
	free(p);
}
#endif

#define MEM_ALIGN 64

enum mem_source { MEM_LIBC, MEM_LIBNUMA, MEM_HOOK };

struct mem_hdr {
	const struct cqpoll_alloc_hook *hook; /* MEM_HOOK */
	size_t size;                          /* with the header */
	enum mem_source source;
	char pad[MEM_ALIGN - sizeof(void *) - sizeof(size_t) - sizeof(int)];
};

_Static_assert(sizeof(struct mem_hdr) == MEM_ALIGN, "header keeps alignment");

static const struct cqpoll_alloc_hook *alloc_hook;

int
cqpoll_alloc_set_hook(const struct cqpoll_alloc_hook *hook)
{
	if (hook != NULL && (hook->alloc == NULL || hook->free == NULL))
		return -EINVAL;
	__atomic_store_n(&alloc_hook, hook, __ATOMIC_RELEASE);
	return 0;
}

const struct cqpoll_alloc_hook *
cqpoll_alloc_get_hook(void)
{
	return __atomic_load_n(&alloc_hook, __ATOMIC_ACQUIRE);
}

/* The hook to use now, or NULL for libnuma. */
static const struct cqpoll_alloc_hook *
hook_now(void)
{
	const struct cqpoll_alloc_hook *h = cqpoll_alloc_get_hook();

	if (h != NULL && h->ready != NULL && !h->ready(h->arg))
		return NULL;
	return h;
}

static int
numa_node_exists(int node)
{
	/* No NUMA support in the kernel: one node, 0. */
	if (numa_available() < 0)
		return node == 0;
	return node <= numa_max_node() &&
	       numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned int)node);
}

int
cqpoll_socket_check(int socket_id, const char *what)
{
	const struct cqpoll_alloc_hook *h;
	int ok;

	if (socket_id == CQPOLL_SOCKET_ANY)
		return 0;
	h = hook_now();
	if (socket_id < 0)
		ok = 0;
	else if (h != NULL)
		ok = h->socket_valid == NULL || h->socket_valid(h->arg, socket_id);
	else
		ok = numa_node_exists(socket_id);
	if (ok)
		return 0;
	if (h != NULL)
		CQPOLL_LOG_LIB(ERR, "%s: socket %d does not exist", what, socket_id);
	else
		CQPOLL_LOG_LIB(ERR, "%s: socket %d does not exist (NUMA nodes 0..%d)",
			       what, socket_id,
			       numa_available() < 0 ? 0 : numa_max_node());
	return -EINVAL;
}

void *
cqpoll_mem_alloc(size_t size, int socket_id)
{
	const struct cqpoll_alloc_hook *h = NULL;
	struct mem_hdr *m;
	size_t total;

	if (size > SIZE_MAX - sizeof(*m)) {
		errno = ENOMEM;
		return NULL;
	}
	total = size + sizeof(*m);
	if (socket_id == CQPOLL_SOCKET_ANY) {
		m = aligned_alloc(MEM_ALIGN, (total + MEM_ALIGN - 1) & ~(size_t)(MEM_ALIGN - 1));
		if (m != NULL) {
			memset(m, 0, total);
			m->source = MEM_LIBC;
		}
	} else {
		if (cqpoll_socket_check(socket_id, "alloc") != 0) {
			errno = EINVAL;
			return NULL;
		}
		h = hook_now();
		if (h != NULL) {
			m = h->alloc(h->arg, total, socket_id);
			if (m != NULL)
				m->source = MEM_HOOK;
		} else {
			/* Whole pages, bound to the node, zeroed by mmap. */
			m = numa_alloc_onnode(total, socket_id);
			if (m != NULL)
				m->source = MEM_LIBNUMA;
		}
	}
	if (m == NULL) {
		CQPOLL_LOG_LIB(ERR, "alloc: no memory for %zu bytes on socket %d",
			       size, socket_id);
		errno = ENOMEM;
		return NULL;
	}
	m->hook = h;
	m->size = total;
	return m + 1;
}

void
cqpoll_mem_free(void *p)
{
	struct mem_hdr *m;

	if (p == NULL)
		return;
	m = (struct mem_hdr *)p - 1;
	switch (m->source) {
	case MEM_LIBC:
		free(m);
		break;
	case MEM_LIBNUMA:
		numa_free(m, m->size);
		break;
	case MEM_HOOK:
		m->hook->free(m->hook->arg, m, m->size);
		break;
	}
}
