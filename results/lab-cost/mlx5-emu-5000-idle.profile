# cqpoll-lab cost profile: --sim-cost=measured:PATH
# from testpmd-cq --json with --floors, by devtools/lab-cost-profile.py
measured=the project's 2-core VM, idle (load average 0.6; its wake-ups then slow: eventfd wake-up p50 41 us, p99 0.96 ms), mlx5-emu, testpmd-cq at be2c2b8, 2026-12-07 04:43 UTC, 5000/s adaptive, sleep_cpu_ns 18158
poll_ns=140
arm_ns=290
wake_ns=41000
wake_p99_ns=960000
wake_cpu_ns=18000
nap_ns=84000
nap_p99_ns=370000
instr_ps=434
