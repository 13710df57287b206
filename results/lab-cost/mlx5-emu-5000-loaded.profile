# cqpoll-lab cost profile: --sim-cost=measured:PATH
# from testpmd-cq --json with --floors, by devtools/lab-cost-profile.py
measured=the project's 2-core VM, loaded (load average 3, other sessions building; not idle), mlx5-emu, testpmd-cq of branch lab, 2026-12-07 03:50 UTC, 5000/s adaptive, sleep_cpu_ns 23964
poll_ns=170
arm_ns=330
wake_ns=28000
wake_p99_ns=3700000
wake_cpu_ns=24000
nap_ns=70000
nap_p99_ns=100000
instr_ps=434
