# tokbench::fmt — {fmt} compiled once, from the system's library (libfmt-dev), for every layer.
#
# Header-only fmt compiles fmt's formatting code into every unit that formats (0.5 to 2.8 s of a
# 6 to 9 s unit at -O1, measured on report_print, prediction, cmd_models and report). The compiled library avoids that, but LibTorch's
# include directory ships fmt headers of another version (v12 in torch 2.11, against Debian's v9),
# which win over /usr/include in every LibTorch unit; calls compiled against those headers find
# no matching symbols in libfmt.so. So the system's fmt headers are put first: GCC and Clang
# search -I directories before any -isystem one (LibTorch's are -isystem), and a folder in the
# build tree holding only a link to the system's fmt/ folder can be given as -I, where
# /usr/include itself would be ignored as a system directory. Every unit, LibTorch's headers
# included (c10d's logging uses fmt), then sees one fmt, the one libfmt.so was built from.
if(NOT TARGET fmt::fmt)
  find_package(fmt CONFIG REQUIRED)
endif()
get_target_property(tokbench_fmt_include_dirs fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
find_path(TOKBENCH_FMT_INCLUDE_DIR fmt/format.h HINTS ${tokbench_fmt_include_dirs} NO_DEFAULT_PATH)
if(NOT TOKBENCH_FMT_INCLUDE_DIR)
  message(FATAL_ERROR "tokbench: fmt/format.h not found beside fmt::fmt (${tokbench_fmt_include_dirs}); "
                      "install it with 'apt-get install libfmt-dev'")
endif()
set(tokbench_fmt_link_dir ${CMAKE_BINARY_DIR}/fmt-include)
file(MAKE_DIRECTORY ${tokbench_fmt_link_dir})
file(CREATE_LINK ${TOKBENCH_FMT_INCLUDE_DIR}/fmt ${tokbench_fmt_link_dir}/fmt SYMBOLIC)

add_library(tokbench_fmt INTERFACE)
add_library(tokbench::fmt ALIAS tokbench_fmt)
target_include_directories(tokbench_fmt INTERFACE ${tokbench_fmt_link_dir})
target_link_libraries(tokbench_fmt INTERFACE fmt::fmt)
