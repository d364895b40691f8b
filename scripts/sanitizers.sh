#!/usr/bin/env bash
# Builds collscope with sanitizers and runs the tests there (window and GPU backends off):
#   asan  build-asan/: AddressSanitizer + UndefinedBehaviorSanitizer (leaks, overflows,
#         use after free, undefined behaviour), every test;
#   tsan  build-tsan/: ThreadSanitizer, the tests that run the cpu backend's threads
#         (see TSAN_TESTS below);
#   all   both (the default).
# -O1 with line tables (-g1): fast enough to build and run, with file:line in every stack.
# Extra arguments go to ctest (e.g. -R 'cpu backend').
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
shift || true
jobs=${COLLSCOPE_JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

# Tests that run threads: the cpu backend, lessons, runs with traces and compute spans,
# the window's worker thread and its re-execution, and the executed properties. The
# others (parsing, algorithms, symbolic checks) are single-threaded: ASan covers them,
# and under TSan they would only cost time (the symbolic property sweep alone takes
# minutes there).
TSAN_TESTS='^(cpu backend|lessons|compute spans|trace|gui views: (the worker|stepping back)|properties: (executed|every op|floating)|cli: (run|a corrupted|a delayed))'

# The mpi backend's tests ("mpi: ...") are left out of both: Open MPI's own allocations are
# reported as leaks in every process it starts (MPI_Init and MPI_Finalize alone: about
# 120 KB in 3350 allocations per process with Open MPI 4.1.4), and TSan cannot see the
# synchronisation of memory that other processes write; that would drown any finding of
# ours. The mpi backend's code is still built with the sanitizers; its logic is tested in
# the plain build, process by process.
MPI_TESTS='^mpi:'

build() {  # build DIR SANITIZERS
  local dir=$1 san=$2
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
      -DCOLLSCOPE_SANITIZE="$san" -DCOLLSCOPE_CUDA=OFF -DCOLLSCOPE_GUI=OFF >/dev/null
  fi
  cmake --build "$dir" -j "$jobs"
}

run_asan() {
  build build-asan address,undefined
  # Leaks are errors; so is any undefined behaviour (built with -fno-sanitize-recover).
  (cd build-asan &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j "$jobs" --timeout 900 -E "$MPI_TESTS" "$@")
}

run_tsan() {
  build build-tsan thread
  (cd build-tsan &&
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --output-on-failure -j "$jobs" --timeout 900 -R "$TSAN_TESTS" -E "$MPI_TESTS" "$@")
}

case "$which" in
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  all) run_asan "$@" && run_tsan "$@" ;;
  *) echo "usage: scripts/sanitizers.sh [asan|tsan|all] [ctest arguments...]" >&2; exit 2 ;;
esac
