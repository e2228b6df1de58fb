# Run by ctest (tests/layering/CMakeLists.txt): compiles a one-line source that includes HEADER
# with the include path of one library (INCLUDES, '|'-separated: what the library sees, its own
# root and those of what it links). EXPECT=refused: the compile must fail because HEADER is not on
# that path (a forbidden edge of DESIGN.md's rule); EXPECT=seen: it must compile (an allowed edge,
# the control that keeps the refusals from passing for another reason).
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" includes "${INCLUDES}")
set(flags -std=c++20 -fsyntax-only)
foreach(dir IN LISTS includes)
  list(APPEND flags "-I${dir}")
endforeach()
string(MAKE_C_IDENTIFIER "${LIBRARY}_${HEADER}" name)
set(source "${WORK_DIR}/${name}.cpp")
file(WRITE "${source}" "#include \"${HEADER}\"\n")
execute_process(COMMAND "${COMPILER}" ${flags} "${source}" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "refused")
  if(status EQUAL 0)
    message(FATAL_ERROR "${LIBRARY} can include ${HEADER}, against DESIGN.md's dependency rule: the edge must not "
                        "compile (cmake/embscale_library.cmake)")
  endif()
  string(FIND "${err}" "${HEADER}: No such file or directory" refused_at)
  if(refused_at EQUAL -1)
    message(FATAL_ERROR "${LIBRARY} including ${HEADER} failed for another reason than the include path:\n${err}")
  endif()
  message(STATUS "${LIBRARY} cannot include ${HEADER}, as the rule says")
elseif(EXPECT STREQUAL "seen")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${LIBRARY} cannot compile #include \"${HEADER}\", an edge the rule allows:\n${err}")
  endif()
  message(STATUS "${LIBRARY} includes ${HEADER}, as the rule allows")
else()
  message(FATAL_ERROR "EXPECT must be refused or seen, got '${EXPECT}'")
endif()
