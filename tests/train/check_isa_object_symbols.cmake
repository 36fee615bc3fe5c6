# The AVX2/AVX512 copies of the row kernels (cross-entropy, RMSNorm) must define no weak (inline, template)
# symbols: the linker keeps one copy of each such symbol for the whole program, and if it kept
# the AVX512-compiled one, code outside the kernel would run AVX512 instructions on a CPU
# without them. Inlined away (as in Release builds), they are not in the object at all.
# Usage: cmake -DNM=<nm> -DOBJECTS="<obj>;..." -P check_isa_object_symbols.cmake
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} -C --defined-only ${object} OUTPUT_VARIABLE symbols RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(REGEX MATCHALL "\n[0-9a-f]+ [WVu] [^\n]*" shared "\n${symbols}")
  if(shared)
    string(REPLACE ";" "" shared "${shared}")
    message(FATAL_ERROR "${object} defines weak symbols the linker may share with other code:${shared}")
  endif()
endforeach()
message(STATUS "no weak symbols in ${OBJECTS}")
