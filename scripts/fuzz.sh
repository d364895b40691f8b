#!/usr/bin/env bash
# Fuzzes scenario parsing, lowering and the symbolic check with libFuzzer for SECONDS
# (default 60), seeded from scenarios/*.json and tests/data/bad/. Builds build-fuzz/ with
# clang (-fsanitize=fuzzer,address,undefined); the corpus grows in build-fuzz/corpus and
# anything that fails lands in build-fuzz/artifacts/. Prints executions, executions per
# second and crashes; exits 1 when a crash, hang or leak was found.
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
command -v clang++ >/dev/null 2>&1 || {
  echo "fuzzing needs clang: apt-get install clang libclang-rt-14-dev (scripts/deps.sh --fuzz)" >&2
  exit 2
}
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
dir=build-fuzz
if [ ! -f "$dir/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
    -DCOLLSCOPE_FUZZ=ON -DCOLLSCOPE_TESTS=OFF -DCOLLSCOPE_CUDA=OFF -DCOLLSCOPE_GUI=OFF >/dev/null
fi
jobs=${COLLSCOPE_JOBS:-$(nproc)}
cmake --build "$dir" -j "$jobs" --target collscope_fuzz_scenario

mkdir -p "$dir/corpus" "$dir/seeds" "$dir/artifacts"
cp scenarios/*.json "$dir/seeds/"
# The bad inputs, except those that are slow on purpose (over the unroll and transfer
# limits: the catalogue's test covers them).
if [ -d tests/data/bad ]; then
  find tests/data/bad -maxdepth 1 -type f -name '*.json' ! -name 'repeat-*' ! -name '*too-many*' \
    -exec cp {} "$dir/seeds/" \;
fi
rm -f "$dir"/artifacts/*
log="$dir/fuzz.log"
set +e
# -timeout: one input may take at most 25 s; -rss_limit_mb: 2 GiB; each input at most 64 KiB.
"$dir/fuzz/collscope_fuzz_scenario" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len=65536 \
  -dict=fuzz/scenario.dict -artifact_prefix="$dir/artifacts/" -print_final_stats=1 "$@" \
  "$dir/corpus" "$dir/seeds" >"$log" 2>&1
rc=$?
set -e
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
# crash-, timeout-, oom- and leak- files are failures; slow-unit- files (over 10 s) are
# only reported.
found=$(find "$dir/artifacts" -type f ! -name 'slow-unit-*' | wc -l)
slow=$(find "$dir/artifacts" -type f -name 'slow-unit-*' | wc -l)
echo "fuzz: ${seconds} s, ${execs:-?} executions, ${rate:-?} exec/s, corpus $(find "$dir/corpus" -type f | wc -l) files, ${found} crashes/hangs, ${slow} slow inputs (log: $log)"
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
  grep -E '^(==[0-9]+==ERROR|SUMMARY|collscope fuzz:|.*deadly signal|.*Test unit written)' "$log" | head -20 >&2
  for f in "$dir"/artifacts/*; do [ -f "$f" ] && echo "reproduce: $dir/fuzz/collscope_fuzz_scenario $f" >&2; done
  exit 1
fi
