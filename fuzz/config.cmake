# DCSGRID_FUZZ=ON (included by the top CMakeLists.txt before any target): the libFuzzer build.
# clang only; every object gets libFuzzer's coverage and ASan + UBSan (UB aborts, so libFuzzer
# records it); CUDA, Python, tests and benchmarks are off, and only the io layer (with core) and
# the targets of fuzz/ are built (the fuzz_targets target, tools/fuzz.sh).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "DCSGRID_FUZZ=ON needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                      "configure with -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "
                      "(cmake --preset fuzz, or tools/fuzz.sh)")
endif()
set(DCSGRID_CUDA OFF CACHE STRING "Build the CUDA backends: AUTO, ON or OFF" FORCE)
set(DCSGRID_PYTHON OFF CACHE STRING "Build the Python module: AUTO, ON or OFF" FORCE)
set(DCSGRID_BUILD_TESTS OFF CACHE BOOL "Build the GoogleTest suite" FORCE)
set(DCSGRID_BUILD_BENCHMARKS OFF CACHE BOOL "Build the benchmark drivers" FORCE)
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer -Wno-unknown-warning-option)
add_link_options(-fsanitize=address,undefined)
