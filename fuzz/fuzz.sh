#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ./run fuzz [SECONDS] [HARNESS...]: builds the libFuzzer harnesses of fuzz/ with clang++-14
# (-fsanitize=fuzzer,address,undefined) into build-fuzz/, makes each one's seed corpus at run
# time from ../shared/data and test/data (nothing is copied into the repository), and runs each
# harness SECONDS (default 60) on one core, niced. Stops with status 1 at the first crash, leak,
# timeout or broken invariant; the reproducer is build-fuzz/<harness>/crash-* (add it as a test).
# Harnesses: hlo_reader hlo_pipeline interval_csv memory_terms_csv buffer_assignment_dump iopddl.
# Environment: FUZZ_CXX (default clang++-14), FUZZ_RUNS (a fixed number of executions instead
# of a time budget), FUZZ_MAX_LEN (longest input; default 4096 for hlo_reader, 128 for
# hlo_pipeline, 1024 for the others), FUZZ_JOBS (run N fuzzing processes at once on one shared
# corpus, libFuzzer's -fork=N; FUZZ_RUNS then counts the executions of all of them).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[ $# -gt 0 ] && shift
all=(hlo_reader hlo_pipeline interval_csv memory_terms_csv buffer_assignment_dump iopddl)
if [ $# -gt 0 ]; then harnesses=("$@"); else harnesses=("${all[@]}"); fi
cxx=${FUZZ_CXX:-clang++-14}
out=build-fuzz
shared=../shared/data
mkdir -p "$out"
# Line tables only: file and line in every report, in three quarters of -g's compile time.
flags=(-std=c++20 -O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=undefined -Iinclude -Ifuzz -Wall -Wextra -Werror)

seed() {  # seed HARNESS: fills $out/seeds/HARNESS from the data folders
  local h=$1 dir=$out/seeds/$1
  rm -rf "$dir"
  mkdir -p "$dir"
  case $h in
    hlo_reader)
      find "$shared/hlo" -name '*.hlo' -exec cp -t "$dir" {} + 2>/dev/null || true
      for f in test/data/xla-oracle/*/*after_optimizations.txt examples/planning/*.hlo; do
        [ -f "$f" ] && cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    hlo_pipeline)  # bytes steer the generator: any bytes are a seed
      for k in 1 2 3 4 5 6 7 8; do head -c $((k * 64)) /dev/urandom > "$dir/random-$k"; done ;;
    interval_csv)
      find "$shared/minimalloc" -name '*.csv' -size -200k -exec cp -t "$dir" {} + 2>/dev/null || true
      cp examples/packing/*.csv "$dir/" 2>/dev/null || true ;;
    memory_terms_csv)
      printf 'id,first,last\n0,0,4\n1,0,4\n2,1,3\n3,2,5\n4,3,2\n' > "$dir/terms.csv"
      printf '# comment\n1,2,9\n0,0,3\n2,5,5\n' > "$dir/unordered.csv" ;;
    buffer_assignment_dump)
      find test/data/xla-oracle "$shared/hlo" \( -name '*buffer-assignment*.txt' -o -name '*live-range*.txt' \) \
        -exec cp --backup=numbered -t "$dir" {} + 2>/dev/null || true ;;
    iopddl)  # the first byte picks plain (0), gzip made by the harness (1), problem + NUL + solution (2)
      for f in "$shared/iopddl/example.json" examples/sharding/*.json; do
        [ -f "$f" ] || continue
        b=$(basename "$f" .json)
        { printf '\0'; cat "$f"; } > "$dir/$b-plain"
        { printf '\0'; gzip -c "$f"; } > "$dir/$b-gzip"
        { printf '\1'; cat "$f"; } > "$dir/$b-wrapped"
        n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["problem"]["nodes"]["costs"]))' "$f")
        { printf '\2'; cat "$f"; printf '\0['; sep=; for ((i = 0; i < n; i++)); do printf '%s0' "$sep"; sep=', '; done; printf ']\n'; } \
          > "$dir/$b-solution"
      done ;;
    *) echo "fuzz: unknown harness '$h' (choose: ${all[*]})" >&2; exit 2 ;;
  esac
}

build() {  # build HARNESS: compiles build-fuzz/HARNESS_fuzz when it is missing or older than its sources
  local h=$1 src=fuzz/${1}_fuzz.cpp exe=$out/${1}_fuzz
  # The pipeline harness's bytes steer a generator and are never compared with the text the
  # passes read, so tracing comparisons buys it nothing; at -O2 without it, and with ASan's
  # allocation stacks off below, it runs 266 executions/s instead of 95 on the same corpus.
  local hflags=("${flags[@]}")
  [ "$h" = hlo_pipeline ] && hflags=("${flags[@]/-O1/-O2}" -fno-sanitize-coverage=trace-cmp)
  if [ ! -x "$exe" ] || [ -n "$(find "$src" fuzz/fuzz.sh fuzz/fuzz_check.hpp fuzz/byte_choices.hpp test/io/deflate_writer.hpp include -newer "$exe" -print -quit)" ]; then
    echo "== building $exe"
    nice "$cxx" "${hflags[@]}" "$src" -o "$exe"
  fi
}

for h in "${harnesses[@]}"; do
  [ -f "fuzz/${h}_fuzz.cpp" ] || { echo "fuzz: unknown harness '$h' (choose: ${all[*]})" >&2; exit 2; }
done
# Every harness is built before any runs, all at once (five compilers fill two cores as well
# as two do; about 1.5 GB each).
pids=()
for h in "${harnesses[@]}"; do
  build "$h" &
  pids+=($!)
done
built=0
for pid in "${pids[@]}"; do wait "$pid" || built=1; done
[ $built -eq 0 ] || { echo "fuzz: a harness did not build (the compiler's message is above)" >&2; exit 1; }

status=0
for h in "${harnesses[@]}"; do
  exe=$out/${h}_fuzz
  seed "$h"
  mkdir -p "$out/$h/corpus"
  # Short inputs keep executions fast (ASan+UBSan); long seeds are cut to this length. The
  # pipeline harness plans each generated module twice and propagates it: at 512 bytes it ran
  # 24 executions/s, at 128 (modules of tens of instructions, loops and calls included) 240/s.
  # Its module text is bounded in the generator too (2000 characters: 142 executions/s on a
  # grown corpus of 3,100 units, where 20000 gave 42).
  case $h in hlo_reader) len=4096 ;; hlo_pipeline) len=128 ;; *) len=1024 ;; esac
  args=(-max_len="${FUZZ_MAX_LEN:-$len}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/$h/")
  # The HLO harnesses have many coverage features; libFuzzer's entropic schedule then spends most
  # of the time in its own bookkeeping (measured: 1 execution/s), so it is off for them.
  case $h in hlo_reader | hlo_pipeline) args+=(-dict=fuzz/hlo.dict -entropic=0) ;; esac
  if [ -n "${FUZZ_RUNS:-}" ]; then args+=(-runs="$FUZZ_RUNS"); else args+=(-max_total_time="$secs"); fi
  # Fork mode: child processes fuzz and the parent merges what they find into the corpus; it
  # stops at the first crash as the single process does.
  if [ -n "${FUZZ_JOBS:-}" ]; then args+=(-fork="$FUZZ_JOBS"); fi
  echo "== fuzzing $h (${FUZZ_RUNS:-$secs s})"
  start=$(date +%s)
  # ASan still checks every access; malloc_context_size=0 only drops the allocation and free
  # stacks from its reports (half the time of a pipeline execution goes into recording them).
  # Replay a reproducer with the stacks: ASAN_OPTIONS=malloc_context_size=30 EXE crash-...
  asan=detect_leaks=1
  [ "$h" = hlo_pipeline ] && asan=$asan:malloc_context_size=0
  if ASAN_OPTIONS=${ASAN_OPTIONS:-$asan} UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 nice "$exe" "${args[@]}" "$out/$h/corpus" "$out/seeds/$h" \
      > "$out/$h.log" 2>&1; then
    # A single process prints its final count; fork mode's parent prints a running total.
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$out/$h.log" | grep -o '[0-9]*$' ||
      grep -o '^#[0-9]*: cov' "$out/$h.log" | tail -1 | grep -o '[0-9]*' || echo '?')
    echo "fuzz: $h clean: $runs executions in $(( $(date +%s) - start )) s"
  else
    echo "fuzz: $h FAILED; see $out/$h.log and $out/$h/crash-* (make it a unit test)" >&2
    tail -40 "$out/$h.log" >&2
    status=1
  fi
done
exit $status
