# One precompiled <torch/torch.h> for every translation unit that includes it or ATen/ATen.h,
# its bulk (directly, through model/gpt.hpp, or through c10d's headers): parsing those ~5000
# headers is most of such a unit's compile time, and `make run` compiles 27 such units. The
# header is compiled once per -O level (below), and each layer names its LibTorch sources with
# tokbench_use_torch_pch(); its other sources keep compiling without it, since force-including
# LibTorch would slow a torch-free unit down.
#
# GCC uses a precompiled header only when the unit's macros and target options (-m...) agree
# with the ones it was built with (it warns under -Winvalid-pch, which CMake adds, and parses
# the header instead): tokbench_torch_pch therefore compiles with LibTorch's own INTERFACE
# definitions, tokbench::fmt and the project's options, as every LibTorch unit does. The
# per-ISA row kernels (-mavx2, CPU_CAPABILITY) and CUDA sources never use it. Definitions of
# tokbench's own (TOKBENCH_*, GTEST_*) do not occur in LibTorch's headers and do not matter.
option(TOKBENCH_TORCH_PCH "Precompile <torch/torch.h> once for the translation units that include it" ON)

# Two headers: one at the build type's level (-O3 in Release) and one at -O1 for the LibTorch
# units of TOKBENCH_O1_TARGETS. GCC does not refuse a header built at another -O level, but
# its code is not the unit's: with the -O3 header, -O1 units grew (text +5% to +23%:
# run_benchmark, run_comm_rank, compute_sharing, measure_collectives, calibrate_peak), while
# -O3 units came out the same size as without a header. Each header is compiled with the flags of its users.
if(TOKBENCH_TORCH_PCH AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  # A target needs a source of its own, and CMake builds the header only for a target with a
  # source that uses it; the header is the point, so that source is empty.
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/torch_pch.cpp
       CONTENT "// tokbench_torch_pch: the precompiled header is this target's output (cmake/torch_pch.cmake).\n")
  foreach(pch_target tokbench_torch_pch tokbench_torch_pch_o1)
    add_library(${pch_target} OBJECT ${CMAKE_BINARY_DIR}/generated/torch_pch.cpp)
    target_link_libraries(${pch_target} PRIVATE ${TORCH_LIBRARIES} tokbench::fmt tokbench::options)
    target_precompile_headers(${pch_target} PRIVATE <torch/torch.h>)
  endforeach()
  target_compile_options(tokbench_torch_pch_o1 PRIVATE ${TOKBENCH_O1_OPTION})
endif()

# tokbench_use_torch_pch(<target> SOURCES <file>...): the listed sources of <target> (paths as
# given to add_library/add_executable) compile with the shared precompiled header; the target's
# other sources do not. A LibTorch source left off the list still compiles, only slower.
function(tokbench_use_torch_pch target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  if(NOT TARGET tokbench_torch_pch)
    return()
  endif()
  if(target IN_LIST TOKBENCH_O1_TARGETS)
    target_precompile_headers(${target} REUSE_FROM tokbench_torch_pch_o1)
  else()
    target_precompile_headers(${target} REUSE_FROM tokbench_torch_pch)
  endif()
  get_target_property(target_sources ${target} SOURCES)
  foreach(source IN LISTS target_sources)
    if(source MATCHES "^\\$<" OR NOT source MATCHES "\\.(cpp|cc|cxx)$")
      continue()  # object files of other targets ($<TARGET_OBJECTS:...>) and headers
    endif()
    if(NOT source IN_LIST arg_SOURCES)
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    else()
      # In a unity-built target (CMakeLists.txt, TOKBENCH_UNITY_BUILD) the LibTorch units compile
      # on their own with the header; a batch of them would force it on the torch-free units too.
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
  # A name that is not one of the target's sources is a typo, or a file that moved.
  foreach(source IN LISTS arg_SOURCES)
    if(NOT source IN_LIST target_sources)
      message(FATAL_ERROR "tokbench_use_torch_pch(${target}): ${source} is not one of its sources")
    endif()
  endforeach()
endfunction()
