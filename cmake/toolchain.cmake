# Compiler flags shared by every berth target, kept in one place.

# ccache and mold shorten builds on 2 cores; both are optional.
find_program(BERTH_CCACHE ccache)
if(BERTH_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${BERTH_CCACHE})
endif()
find_program(BERTH_MOLD mold)
# keep-text-section-prefix: the static initialisers (.text.startup) side by side, as GNU ld's
# default script puts them, so that each berth process's start faults in one page of them, not one
# page per library object.
if(BERTH_MOLD)
  add_link_options(-fuse-ld=mold -Wl,-z,keep-text-section-prefix)
endif()

# x86-64-v2 (every x86-64 CPU since about 2009) gives the scheduler's bitsets a real popcount
# instruction instead of a library call.
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-march=x86-64-v2 BERTH_HAS_X86_64_V2)
if(BERTH_HAS_X86_64_V2)
  add_compile_options(-march=x86-64-v2)
endif()

# Warnings are errors in the presets and CI (BERTH_WERROR=ON), never in a user's or packager's
# plain build: another compiler version's new warnings (or known false positives, such as GCC
# 12's -Wrestrict at -O3 in std::string concatenation) must not break `cmake --build`.
option(BERTH_WERROR "Treat compiler warnings as errors (the presets turn it on)" OFF)
add_library(berth_warnings INTERFACE)
target_compile_options(berth_warnings INTERFACE -Wall -Wextra $<$<BOOL:${BERTH_WERROR}>:-Werror>
                                                -Wshadow=local -Wnon-virtual-dtor
                                                -Wimplicit-fallthrough)
# GCC's flow-based warnings misfire at -O3 (the Release preset) inside inlined std::string code:
# -Wrestrict on string concatenation (GCC bug 105329, fixed in 13) and -Wmaybe-uninitialized on
# strings of aggregates built with `{}` (store::Write). Both are silenced for GCC so the Release
# preset keeps -Werror; clang (the asan preset) still reports uninitialised reads.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(berth_warnings INTERFACE -Wno-maybe-uninitialized)
  if(CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(berth_warnings INTERFACE -Wno-restrict)
  endif()
endif()
# Clang checks the locking annotations (src/common/thread_annotations.h) in every file it
# compiles: the asan preset builds with clang, so CI analyses the whole tree (ADR 0004).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(berth_warnings INTERFACE -Wthread-safety)
endif()

if(BERTH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# The fuzz targets (fuzz/, docs/fuzzing.md) link libFuzzer's main; they need clang. The asan
# preset builds them beside the tests (CI replays their corpora with them); the fuzz preset also
# instruments every library for libFuzzer's coverage (BERTH_FUZZ_COVERAGE), for exploring.
if(BERTH_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "BERTH_FUZZ needs clang and libFuzzer: cmake --preset asan (or fuzz)")
endif()
if(BERTH_FUZZ_COVERAGE)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# berth_test(NAME SOURCES... LIBS ...) adds a GoogleTest executable and registers its tests.
include(GoogleTest)
function(berth_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main berth_warnings)
  # Tests that read the project's files (docs, data) find them here, whatever __FILE__ says
  # (ccache's base_dir makes it relative).
  target_compile_definitions(${name} PRIVATE BERTH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
endfunction()
