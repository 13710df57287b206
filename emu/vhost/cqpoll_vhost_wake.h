/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VHOST_WAKE_H
#define CQPOLL_VHOST_WAKE_H

/**
 * @file
 * Has DPDK's vhost-user event thread take in the listening socket of a
 * vhost port (net_vhost, server mode) that just started, so that a
 * virtio_user port connecting to it is answered at once.
 *
 * DPDK 22.11's vhost library adds a server's listening socket to the fd set
 * of its event thread without waking the thread: the thread's poll() takes
 * the socket in only when its one-second timeout ends, and virtio_user's
 * probe, whose first vhost-user request waits for the answer, waits for
 * that. Only a new vhost-user connection wakes the thread, and a client-mode
 * vhost socket makes one when it starts.
 */

/**
 * Wake the vhost-user event thread after a vhost port started: a
 * client-mode vhost socket is registered on @p path, connected to a
 * listener bound there for the call, and unregistered; @p path is unlinked
 * before and after.
 *
 * Not thread-safe against other vhost driver registrations on @p path.
 *
 * @param path  a free Unix socket path (e.g. beside the vhost port's socket)
 * @return 0; a negative errno if the listener could not be made (socket(),
 *   bind(), listen()); -EIO if vhost did not register, start or connect the
 *   client socket.
 */
int cqpoll_vhost_events_wake(const char *path);

#endif /* CQPOLL_VHOST_WAKE_H */
