# Run by ctest (tests/workloads/CMakeLists.txt): the trace library's layering. LINKS is every
# library that linking embscale_trace pulls in (its link closure as configured, '|'-separated);
# FORBIDDEN ('|'-separated) are libraries it must not pull in. Fails naming each one found.
cmake_minimum_required(VERSION 3.25)  # IN_LIST (policies are unset in script mode)
string(REPLACE "|" ";" links "${LINKS}")
string(REPLACE "|" ";" forbidden "${FORBIDDEN}")
if(NOT "embscale_base" IN_LIST links)
  message(FATAL_ERROR "embscale_trace's link closure lacks embscale_base (it was not computed?): '${LINKS}'")
endif()
set(found "")
foreach(lib IN LISTS forbidden)
  if(lib IN_LIST links)
    list(APPEND found ${lib})
  endif()
endforeach()
if(found)
  list(JOIN found ", " found)
  message(FATAL_ERROR "embscale_trace links ${found}: the trace formats need core alone "
                      "(workloads/trace/CMakeLists.txt; Checksum64 is lib/core/checksum.hpp). Its closure: ${LINKS}")
endif()
message(STATUS "embscale_trace links ${LINKS}")
