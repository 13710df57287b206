#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Quick start, second command (and what CI runs, see .ci/run): install the
# dependencies, then build and test cqpoll four ways:
#
#   build       normal build, every test suite
#   abi         the shared libraries' ABI against the baseline in abi/, and
#               its negative control (two fast-path fields swapped must fail)
#   build-core  the core alone (-Ddpdk/-Dverbs/-Dmlx5/-Dnuma=disabled): the
#               fast suite (cqpoll as a meson subproject of a parent builds
#               its own core alone: suite subproject, with the normal build's)
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer, every test suite
#               but the SPIN model (no C of ours runs there), the
#               subproject (built without this build's options) and the
#               lab's long simulations (suite lab: the policies' C runs in
#               the fast suite here), leak checking on
#   build-tsan  ThreadSanitizer, the stress suite with 2x10^4 transitions per
#               arm semantics; clang is tried first, gcc if clang's TSan
#               cannot build or run here
#
# usage: devtools/test-all.sh [--long]
#
# Tiers (doc/guides/testing.md): by default every test and every negative
# control runs, at sizes that still catch the controls (what CI runs).
# --long sets every build up with -Dtests_long=true: the stress tests at
# their long sizes, the longer fuzz run and the policy lab's long
# simulations, and the sanitizer phases at their long sizes too.
#
# A failed phase does not stop the phases that do not depend on it. Prints a
# summary with the time of each phase; exits 1 if any phase failed.
#
# build-core, build-asan and build-tsan overlap the test phase: they start
# when the normal build is done, under SCHED_IDLE (chrt --idle), so that they
# take only the CPU time the tests leave idle (the app suite mostly waits on
# its runs' fixed durations) and a test thread that wakes preempts them at
# once: the serial tests keep both CPUs for their race windows. build-asan
# builds only what its phase's tests need (build.sh --tests); build-core and
# build-tsan build everything, the check that the whole tree builds without
# the optional stacks and with clang. A build still running when its tests are
# next gets the normal priority back. Their phase time in the summary is what
# waiting for them added; each one's own time and its log are printed when it
# is waited for (kept in build-bg/).
set -euo pipefail

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$topdir"

test_args=(--print-errorlogs --num-processes 2)

long=0
case "${1:-}" in
"") ;;
--long) long=1 ;;
-h | --help)
    awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"
    exit 0
    ;;
*)
    echo "test-all: unknown argument '$1' (usage: devtools/test-all.sh [--long])" >&2
    exit 2
    ;;
esac
tier_args=()
[ "$long" -eq 1 ] && tier_args=(-Dtests_long=true)

# Fewer stress transitions under the sanitizers than in the normal build:
# they run every code path of the tests, and the counts that make a lost
# wake-up likely run in the normal build.
if [ "$long" -eq 1 ]; then
    asan_sizes=(-Dstress_transitions=50000 -Dgroup_stress_transitions=10000
        -Dgroup_stress_cq_transitions=10000 -Dofi_stress_transitions=10000
        -Ducx_stress_transitions=10000 -Dmlx5_qp_requests=100000)
    tsan_sizes=(-Dstress_transitions=20000 -Dgroup_stress_transitions=10000
        -Dgroup_stress_cq_transitions=10000 -Dofi_stress_transitions=10000
        -Ducx_stress_transitions=10000 -Dmlx5_qp_requests=100000)
else
    asan_sizes=(-Dstress_transitions=10000 -Dgroup_stress_transitions=4000
        -Dgroup_stress_cq_transitions=6000 -Dofi_stress_transitions=3000
        -Ducx_stress_transitions=2000 -Dmlx5_qp_requests=20000)
    tsan_sizes=(-Dstress_transitions=5000 -Dgroup_stress_transitions=3000
        -Dgroup_stress_cq_transitions=3000 -Dofi_stress_transitions=3000
        -Ducx_stress_transitions=2000 -Dmlx5_qp_requests=20000
        -Dmlx5_stress_transitions=2000)
fi
# -O1, the optimization AddressSanitizer's authors advise: gcc compiles the
# instrumented tree in about half the CPU time of -O2 (the biggest of the
# background builds), and the sanitized tests run no slower. The normal
# build's -O2 code runs every suite.
asan_args=("-Db_sanitize=address,undefined" -Db_lundef=false -Doptimization=1
    "${asan_sizes[@]}" "${tier_args[@]}")
# The default tier runs no app suite under ASan (see test-asan below): no
# testpmd-cq to build there, and no API reference in either tier.
asan_args+=(-Ddocs=disabled)
[ "$long" -eq 1 ] || asan_args+=(-Dapp=disabled)
# The suites each build's phase runs. build-asan builds only what their tests
# need (build.sh --tests): the rest of the tree is built by gcc at -O2 in the
# normal build and never run there. Under ASan, every suite but these: the
# model suite runs SPIN on Promela, none of our C: nothing to sanitize. The
# fuzz suite builds its own ASan+UBSan target with clang: it ran in the normal
# phase. The subproject suite builds its own parent project, the same whatever
# this build's options: it runs with the normal build's CPU-time tests. The
# lab suite's long simulations run the policies' C, which the fast suite's
# policy tests run here too. The app suite (testpmd-cq end to end, a second of
# start-up a run) runs here in the long tier; the default tier's sanitized
# runs are the unit, contract, stress and failure tests, which reach the
# library's and the drivers' code.
asan_suites='!model,fuzz,subproject,lab'
[ "$long" -eq 1 ] || asan_suites+=',app'
tsan_suites=stress
core_suites=fast
asan_env=(
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
)
# Leaks inside DPDK itself (EAL state that rte_eal_cleanup() does not free) are
# not ours to fix: if a test ever fails on one, list the DPDK function, and only
# that function, in devtools/lsan.supp ("leak:rte_..." / "leak:eal_...").
# Never suppress a cqpoll_ function there. Not needed so far: the app suite
# (testpmd-cq, DPDK EAL with --no-huge) passes with leak detection on Debian
# 12's DPDK 22.11, so the file does not exist.
if [ -f devtools/lsan.supp ]; then
    asan_env+=("LSAN_OPTIONS=suppressions=$topdir/devtools/lsan.supp:print_suppressions=0")
fi

# Only the stress suite runs there: the app, docs and DPDK are not built.
# TSan reports a race from the happens-before order of any run that reaches
# the racing accesses, whether or not the race does harm in that run: it
# needs the code paths, not the counts that make a lost wake-up likely (those
# run in the normal build).
tsan_args=(-Db_sanitize=thread -Db_lundef=false "${tsan_sizes[@]}" -Dapp=disabled
    -Ddocs=disabled "${tier_args[@]}")
tsan_env=(TSAN_OPTIONS=halt_on_error=1)
# DPDK's internal races only (devtools/tsan.supp says which).
if [ -f devtools/tsan.supp ]; then
    tsan_env=("TSAN_OPTIONS=halt_on_error=1:suppressions=$topdir/devtools/tsan.supp")
fi
tsan_wrap=() # setarch -R if TSan needs ASLR off on this kernel

# Sanitized tests run slower than the timeouts the tests were given.
asan_timeout_mult=3
tsan_timeout_mult=10

names=()
results=()
times=()
failed=()

# phase NAME COMMAND...: run a command as one phase and record how it went.
# COMMAND runs without errexit: functions given here check every step.
phase() {
    local name=$1 start end rc
    shift
    echo
    echo "==> [$name] $*"
    start=$(date +%s%N)
    set +e
    "$@"
    rc=$?
    set -e
    end=$(date +%s%N)
    names+=("$name")
    times+=("$(( (end - start) / 1000000 ))")
    if [ "$rc" -eq 0 ]; then
        results+=(ok)
    else
        results+=("FAILED (exit $rc)")
        failed+=("$name")
    fi
    return "$rc"
}

skip() {
    echo
    echo "==> [$1] skipped: $2"
    names+=("$1")
    times+=(0)
    results+=("skipped: $2")
}

summary() {
    local i ms
    echo
    echo "==> Summary"
    for i in "${!names[@]}"; do
        ms=${times[$i]}
        printf '  %-12s %7d.%d s  %s\n' "${names[$i]}" "$((ms / 1000))" "$((ms % 1000 / 100))" \
            "${results[$i]}"
    done
    if [ ${#failed[@]} -eq 0 ]; then
        echo "test-all: all phases passed"
    else
        echo "test-all: FAILED: ${failed[*]}"
    fi
}

# run_tests BUILDDIR SUITE TIMEOUT_MULT [VAR=VALUE... [WRAPPER...]]
# Run the tests of BUILDDIR (of SUITE only, unless SUITE is empty; "A,B":
# of suites A and B; "!A,B": all but suites A and B), meson's log named
# RUN_LOGBASE (testlog). Fails if there is no such test: a sanitizer phase
# that ran nothing must not pass.
run_tests() {
    local builddir=$1 suite=$2 mult=$3 sel=()
    shift 3
    case "$suite" in
    "") ;;
    !*)
        local s
        IFS=, read -ra skip_suites <<<"${suite#!}"
        for s in "${skip_suites[@]}"; do
            sel+=(--no-suite "$s")
        done
        ;;
    *)
        local s
        IFS=, read -ra only_suites <<<"$suite"
        for s in "${only_suites[@]}"; do
            sel+=(--suite "$s")
        done
        ;;
    esac
    if ! meson test -C "$builddir" --no-rebuild --list "${sel[@]}" >/dev/null 2>&1; then
        echo "test-all: $builddir defines no test${suite:+ in suite $suite}" >&2
        return 1
    fi
    echo "+ $* meson test -C $builddir ${sel[*]} ${test_args[*]} -t $mult"
    env "$@" meson test -C "$builddir" --no-rebuild "${sel[@]}" "${test_args[@]}" -t "$mult" \
        --logbase "${RUN_LOGBASE:-testlog}"
}

# The normal build's tests whose verdict does not depend on timing, only on
# CPU time: the SPIN models, the install as a packager, the parent project
# that takes cqpoll as a subproject (a build of its own, the same whatever
# this build's options), the fuzzer (a fixed wall time, whatever its share of
# the CPUs) and the policy lab's simulations on their virtual clock. They run
# beside the timed tests at idle priority, as the other builds and the ABI
# checks do, in the CPU time those leave idle; their timeouts stretched for
# the time the timed tests keep both CPUs busy.
cpu_suites=model,package,subproject,fuzz,lab
run_cpu_tests() {
    RUN_LOGBASE=cpu run_tests build "$cpu_suites" 5
}

# tsan_runs CC: can CC's ThreadSanitizer run a threaded program here? Old TSan
# runtimes (gcc 12, clang 14) abort with "unexpected memory mapping" on kernels
# with vm.mmap_rnd_bits > 28; then retry with ASLR off (setarch -R).
tsan_runs() {
    local cc=$1 dir rc=1
    dir=$(mktemp -d)
    cat >"$dir/t.c" <<'EOF'
#include <pthread.h>
static int x;
static void *f(void *a) { (void)a; __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, f, 0); f(0); pthread_join(t, 0); return x != 2; }
EOF
    tsan_wrap=()
    if "$cc" -fsanitize=thread -pthread -o "$dir/t" "$dir/t.c" >/dev/null 2>&1; then
        if "$dir/t" >/dev/null 2>&1; then
            rc=0
        elif setarch "$(uname -m)" -R "$dir/t" >/dev/null 2>&1; then
            tsan_wrap=(setarch "$(uname -m)" -R)
            echo "test-all: $cc's ThreadSanitizer needs ASLR off here: tests run under ${tsan_wrap[*]}"
            rc=0
        fi
    fi
    rm -rf -- "$dir"
    return "$rc"
}

# Build build-tsan with the first compiler whose TSan works and builds cqpoll.
# gcc 12 can refuse the build (-Wtsan, an error with werror, on
# atomic_thread_fence); clang is the fallback. The compiler that worked last
# time is tried first.
tsan_build() {
    # clang first: gcc 12 warns (-Wtsan) that TSan does not model
    # atomic_thread_fence, which the software CQ's Dekker pair uses, and
    # -Werror makes that fatal. gcc stays as the fallback.
    local cc cxx order=(clang gcc)
    for cc in "${order[@]}"; do
        cxx=g++
        [ "$cc" = clang ] && cxx=clang++
        if ! command -v "$cc" >/dev/null; then
            echo "test-all: no $cc"
            continue
        fi
        if ! tsan_runs "$cc"; then
            echo "test-all: $cc's ThreadSanitizer cannot run here; trying the next compiler"
            continue
        fi
        if CC=$cc CXX=$cxx ./devtools/build.sh build-tsan "${tsan_args[@]}"; then
            echo "test-all: build-tsan built with $cc"
            # Run in the background: the caller reads the wrapper from here.
            printf '%s\n' "${tsan_wrap[@]}" >build-tsan/.cqpoll-tsan-wrap
            return 0
        fi
        echo "test-all: build-tsan failed with $cc; trying the next compiler"
    done
    return 1
}

# bg_start NAME COMMAND...: run COMMAND (a function too) in the background at
# idle priority (nice 19 where SCHED_IDLE is refused), its output in
# build-bg/NAME.log (outside NAME: build.sh may set NAME up anew);
# bg_show NAME: wait for it, show the log and its time, return its status.
declare -A bg_pid=()
bg_start() {
    local name=$1
    shift
    mkdir -p build-bg
    rm -f "build-bg/$name.log" "build-bg/$name.time"
    (
        chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null
        start=$(date +%s%N)
        set +e
        "$@" >"build-bg/$name.log" 2>&1
        rc=$?
        echo "$(( ($(date +%s%N) - start) / 1000000 ))" >"build-bg/$name.time"
        exit "$rc"
    ) &
    bg_pid[$name]=$!
    echo "test-all: $name started in the background at idle priority: $*"
}
# bg_unidle PID: PID and its descendants back to this script's priority (what
# they start from now on inherits it): a build waited for must not starve
# behind other work on a shared machine.
bg_unidle() {
    local p
    for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        bg_unidle "$p"
    done
    chrt --other -p 0 "$1" >/dev/null 2>&1 || true
    renice -n "$(nice)" -p "$1" >/dev/null 2>&1 || true
}
bg_show() {
    local ms rc=0
    bg_unidle "${bg_pid[$1]}"
    wait "${bg_pid[$1]}" || rc=$?
    cat "build-bg/$1.log"
    ms=$(cat "build-bg/$1.time" 2>/dev/null || echo 0)
    echo "test-all: $1 took $((ms / 1000)).$((ms % 1000 / 100)) s in the background"
    return "$rc"
}

if ! phase deps ./devtools/install-deps.sh; then
    summary
    exit 1
fi

# The core alone: no DPDK, rdma-core or libnuma. Its fast suite (core, sw
# and the other drivers found, libcqpoll_emu); the other suites ran on the
# full build.
core_args=(-Ddpdk=disabled -Dverbs=disabled -Dmlx5=disabled -Dnuma=disabled -Ddocs=disabled
    "${tier_args[@]}")

if phase build ./devtools/build.sh build "${tier_args[@]}"; then
    bg_start build-core ./devtools/build.sh build-core "${core_args[@]}"
    bg_start test-cpu run_cpu_tests
    bg_start build-asan ./devtools/build.sh --tests "$asan_suites" build-asan "${asan_args[@]}"
    bg_start build-tsan tsan_build
    # The ABI checks read the built libraries (abidw, abidiff; the control
    # builds libcqpoll again): CPU time, no timing.
    bg_start abi ./devtools/check-abi.sh build
    bg_start abi-control ./devtools/check-abi.sh --control build
    phase test run_tests build "!$cpu_suites" 1 || true
    phase abi bg_show abi || true
    phase abi-control bg_show abi-control || true
    phase test-cpu bg_show test-cpu || true
else
    skip test "build failed"
    bg_start build-core ./devtools/build.sh build-core "${core_args[@]}"
    bg_start build-asan ./devtools/build.sh --tests "$asan_suites" build-asan "${asan_args[@]}"
    bg_start build-tsan tsan_build
fi

if phase build-core bg_show build-core; then
    phase test-core run_tests build-core "$core_suites" 1 || true
else
    skip test-core "build-core failed"
fi

if phase build-asan bg_show build-asan; then
    phase test-asan run_tests build-asan "$asan_suites" "$asan_timeout_mult" \
        "${asan_env[@]}" || true
else
    skip test-asan "build-asan failed"
fi

if phase build-tsan bg_show build-tsan; then
    mapfile -t tsan_wrap <build-tsan/.cqpoll-tsan-wrap
    [ -n "${tsan_wrap[*]}" ] || tsan_wrap=()
    phase test-tsan run_tests build-tsan "$tsan_suites" "$tsan_timeout_mult" "${tsan_env[@]}" \
        "${tsan_wrap[@]}" || true
else
    skip test-tsan "build-tsan failed"
fi

summary
[ ${#failed[@]} -eq 0 ]
