#!/usr/bin/env bash
# Fails when src/core reads a clock, calls rand/getenv, opens files or sockets, or starts threads
# (design.md: "the core is pure"). Two checks: the sources (includes and calls), and the
# undefined symbols of the built library (what it really links against).
set -u
src_dir=$1
lib=$2
fail=0

# 1. Sources.
patterns=(
  '#include <(chrono|ctime|time\.h|thread|future|fstream|cstdio|stdio\.h|random|filesystem|unistd\.h|sys/|netinet|arpa/|fcntl\.h|pthread\.h|mutex|condition_variable|iostream)>'
  '\b(std::)?(time|clock|gettimeofday|clock_gettime|localtime|gmtime|rand|srand|random|drand48|getenv|secure_getenv|setenv|fopen|open|openat|socket|connect|bind|listen|accept|pthread_create|fork|exec[lv]p?e?|system|popen|sleep|usleep|nanosleep)\s*\('
  'std::(thread|jthread|async|random_device|chrono|ifstream|ofstream|fstream|filesystem|mutex|cout|cerr)\b'
  '\b(system_clock|steady_clock|high_resolution_clock)\b'
)
while IFS= read -r -d '' f; do
  # Tests and test-only fixtures (src/core/testing/) may use what tests need.
  case "$f" in *_test.cc|*/testing/*) continue ;; esac
  for p in "${patterns[@]}"; do
    # Ignore comments: drop everything after // on each line.
    hits=$(sed 's://.*$::' "$f" | grep -nE "$p" || true)
    if [ -n "$hits" ]; then
      echo "core purity: $f uses a forbidden facility (pattern: $p):"
      echo "$hits" | sed 's/^/    /'
      fail=1
    fi
  done
done < <(find "$src_dir" -name '*.h' -print0 -o -name '*.cc' -print0)

# 2. Symbols the library needs from outside (libc/libstdc++): none of the impure ones.
if [ -f "$lib" ]; then
  bad=$(nm -u --format=posix "$lib" 2>/dev/null | awk '{print $1}' | sed 's/@.*//' | sort -u |
        grep -xE '(time|clock|gettimeofday|clock_gettime|clock_gettime64|rand|rand_r|srand|random|getenv|secure_getenv|fopen|fopen64|open|open64|openat|socket|connect|bind|listen|accept|accept4|pthread_create|fork|execve|execvp|system|popen|sleep|usleep|nanosleep|_ZNSt6chrono3_V212system_clock3nowEv|_ZNSt6chrono3_V212steady_clock3nowEv|_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE|_ZNSt13random_device.*)' || true)
  if [ -n "$bad" ]; then
    echo "core purity: $lib links against impure symbols:"
    echo "$bad" | sed 's/^/    /'
    fail=1
  fi
else
  echo "core purity: library $lib not found"
  fail=1
fi

if [ "$fail" -eq 0 ]; then echo "core purity: OK ($(find "$src_dir" -name '*.cc' | wc -l) sources, symbols of $(basename "$lib"))"; fi
exit "$fail"
