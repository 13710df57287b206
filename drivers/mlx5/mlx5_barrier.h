/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_BARRIER_H
#define CQPOLL_MLX5_BARRIER_H

/*
 * Every barrier between the CPU and an mlx5 device, named by what it orders.
 * The instructions follow rdma-core util/udma_barrier.h for the same purpose
 * (mlx5-cq-contract.md §3.2, §4.1, §5.1); an architecture whose memory model
 * was not checked against it does not build.
 */

#if defined(__x86_64__)

/* CQE body loads after the owner-byte load (udma_from_device_barrier). */
#define cqpoll_mlx5_rmb_cqe_after_owner() __asm__ volatile("lfence" ::: "memory")
/* Slots fully read before the consumer index frees them (udma_to_device_barrier). */
#define cqpoll_mlx5_wmb_slots_before_ci() __asm__ volatile("" ::: "memory")
/* Doorbell record before the UAR write, which may be write-combining (mmio_wc_start). */
#define cqpoll_mlx5_wmb_record_before_uar() __asm__ volatile("sfence" ::: "memory")
/*
 * The UAR write out (mmio_flush_writes) and, beyond rdma-core, ordered before
 * the loads of the poll that follows an arm: mfence orders store -> load,
 * sfence does not. See mlx5_arm.c.
 */
#define cqpoll_mlx5_uar_flush_before_repoll() __asm__ volatile("mfence" ::: "memory")

#elif defined(__aarch64__)

#define cqpoll_mlx5_rmb_cqe_after_owner() __asm__ volatile("dsb ld" ::: "memory")
/*
 * rdma-core's udma_to_device_barrier is "dsb st", which orders stores only;
 * freeing slots must also order the loads that read them, hence dmb osh.
 */
#define cqpoll_mlx5_wmb_slots_before_ci() __asm__ volatile("dmb osh" ::: "memory")
#define cqpoll_mlx5_wmb_record_before_uar() __asm__ volatile("dsb st" ::: "memory")
#define cqpoll_mlx5_uar_flush_before_repoll() __asm__ volatile("dsb sy" ::: "memory")

#else
#error "mlx5 barriers are defined only for x86_64 and aarch64"
#endif

#endif /* CQPOLL_MLX5_BARRIER_H */
