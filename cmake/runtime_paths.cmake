# The run paths (RUNPATH) of every binary the build makes: exactly the folders, chosen here, of
# the shared libraries it links that the system's loader would not find by itself (LibTorch's
# lib folder; the CUDA runtime's, where the CUDA unit is built), each absolute and existing.
# CMake's own run path for these binaries was LibTorch's CMake configuration's link folders
# (/lib/intel64, /lib/intel64_win, /lib/win-x64: MKL's, from an empty MKL_ROOT), then the
# libraries' folders, then an empty entry, which the loader reads as the working directory: a
# libfmt.so.9 left there was loaded by `tokbench` (issue 38). CMAKE_SKIP_RPATH (set by the
# top-level CMakeLists.txt) turns CMake's off; this adds ours to every executable and module
# linked after it. tests/run/runtime_paths.py reads the dynamic section of every built binary
# against TOKBENCH_RUNTIME_PATH.
set(TOKBENCH_RUNTIME_PATH "${TORCH_INSTALL_PREFIX}/lib")
if(TARGET CUDA::cudart)
  get_target_property(tokbench_cudart CUDA::cudart IMPORTED_LOCATION)
  if(tokbench_cudart)
    get_filename_component(tokbench_cudart_dir "${tokbench_cudart}" DIRECTORY)
    list(APPEND TOKBENCH_RUNTIME_PATH "${tokbench_cudart_dir}")
  endif()
endif()
list(REMOVE_DUPLICATES TOKBENCH_RUNTIME_PATH)
foreach(dir IN LISTS TOKBENCH_RUNTIME_PATH)
  if(NOT IS_ABSOLUTE "${dir}" OR NOT IS_DIRECTORY "${dir}")
    message(FATAL_ERROR "tokbench: run path '${dir}' is not an existing absolute folder")
  endif()
endforeach()
list(JOIN TOKBENCH_RUNTIME_PATH ":" tokbench_runtime_path_joined)
add_link_options("LINKER:--enable-new-dtags,-rpath,${tokbench_runtime_path_joined}")
message(STATUS "tokbench: run path ${tokbench_runtime_path_joined}")
