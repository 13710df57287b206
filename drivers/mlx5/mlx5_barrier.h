/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_BARRIER_H
#define CQPOLL_MLX5_BARRIER_H

/*
 * Every barrier between the CPU and an mlx5 device, named by what it orders
 * (doc/guides/mlx5-cq-contract.md §3.2, §4.1, §5.1); an architecture whose memory model
 * was not checked does not build.
 *
 * The read side (CQE body after the owner byte) is where the cost is: it runs
 * once per CQE. The CQ buffer is ordinary write-back memory that the device
 * writes by coherent DMA, and the device writes a CQE's body before its owner
 * byte (PCIe posted writes stay in order). So what is needed is that the CPU
 * does not read the body before the owner byte:
 *
 * - x86-64 is TSO: a load is never reordered with an older load (Intel SDM
 *   vol. 3A §9.2.2, "Loads are not reordered with other loads"), for WB
 *   memory whoever wrote it. Only the compiler can reorder them, so a
 *   compiler barrier is enough, as everyone but rdma-core's generic provider
 *   does: DPDK's mlx5 PMD uses rte_io_rmb(), which is
 *   rte_compiler_barrier() on x86 (lib/eal/x86/include/rte_atomic.h); the
 *   kernel's mlx5e uses dma_rmb(), barrier() on x86
 *   (arch/x86/include/asm/barrier.h); UCX ucs_memory_cpu_load_fence() is a
 *   compiler fence on x86. rdma-core's udma_from_device_barrier() is lfence
 *   (util/udma_barrier.h), which also orders loads from WC/UC memory that a
 *   CQ buffer never is; it costs ~18 cycles per CQE on an EPYC VM.
 * - aarch64 is weakly ordered: the body loads need a load barrier over the
 *   outer-shareable domain the device is in: dmb oshld, rdma-core's
 *   udma_from_device_barrier() since 2024 (the older dsb ld also waits for
 *   completion of every access, which this ordering does not need).
 *
 * The write side (doorbell record, UAR) is paid once per burst, post burst
 * or arm and stays as rdma-core has it; an independent check against rdma-core's
 * mlx5_arm_cq() passes on the exact words and their order.
 */

#if defined(__x86_64__)

/* CQE body loads after the owner-byte load: TSO keeps load order (see above). */
#define cqpoll_mlx5_rmb_cqe_after_owner() __asm__ volatile("" ::: "memory")
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
/*
 * Post path (doc/guides/mlx5-wqe-contract.md §4.1, rdma-core post_send_db()). WQEs are
 * in write-back memory the device reads by DMA after the doorbell: on x86-64
 * stores are not reordered with older stores (TSO), so only the compiler
 * must keep the WQE stores before the record store (udma_to_device_barrier).
 */
#define cqpoll_mlx5_wmb_wqe_before_record() __asm__ volatile("" ::: "memory")
/*
 * The doorbell write to the BlueFlame register, which is mapped
 * write-combining: flushed out of the WC buffer at once so that it is not
 * held back, and so that two doorbells of the QP reach the device in order
 * (mmio_flush_writes; sfence, as rdma-core, DPDK rte_wmb and UCX).
 */
#define cqpoll_mlx5_uar_flush() __asm__ volatile("sfence" ::: "memory")

#elif defined(__aarch64__)

#define cqpoll_mlx5_rmb_cqe_after_owner() __asm__ volatile("dmb oshld" ::: "memory")
/*
 * rdma-core's udma_to_device_barrier is "dsb st", which orders stores only;
 * freeing slots must also order the loads that read them, hence dmb osh.
 */
#define cqpoll_mlx5_wmb_slots_before_ci() __asm__ volatile("dmb osh" ::: "memory")
#define cqpoll_mlx5_wmb_record_before_uar() __asm__ volatile("dsb st" ::: "memory")
#define cqpoll_mlx5_uar_flush_before_repoll() __asm__ volatile("dsb sy" ::: "memory")
/* rdma-core HEAD udma_to_device_barrier: stores to memory the device reads. */
#define cqpoll_mlx5_wmb_wqe_before_record() __asm__ volatile("dmb oshst" ::: "memory")
/* rdma-core mmio_flush_writes on aarch64. */
#define cqpoll_mlx5_uar_flush() __asm__ volatile("dsb st" ::: "memory")

#else
#error "mlx5 barriers are defined only for x86_64 and aarch64"
#endif

#endif /* CQPOLL_MLX5_BARRIER_H */
