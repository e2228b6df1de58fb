# One static library per folder of lib/ (and per part of workloads/), with the layering of
# DESIGN.md ("Dependency rule") enforced by the compiler:
#
# * Each library exports an include root of its own: build/include_roots/<target>/, holding one
#   link named as the folder's include prefix ("kv" -> lib/kv, "workloads/trace" ->
#   workloads/trace). No target sees lib/ as a whole, so "#include "sim/..."" compiles only in a
#   target that links embscale_sim, directly or through a PUBLIC dependency.
# * A dependency is PUBLIC when the library's headers include the other's headers (its users
#   compile them too), PRIVATE when only its sources do. An include against the rule then fails
#   to build with "No such file or directory" (tests/layering proves it for forbidden edges).
#
#   embscale_library(<target> FOLDER <folder from the source root> INCLUDE_AS <prefix>
#                    SOURCES <files...> [PUBLIC <deps...>] [PRIVATE <deps...>])
function(embscale_library target)
  cmake_parse_arguments(arg "" "FOLDER;INCLUDE_AS" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  if(NOT arg_FOLDER OR NOT arg_INCLUDE_AS OR NOT arg_SOURCES)
    message(FATAL_ERROR "embscale_library(${target}): FOLDER, INCLUDE_AS and SOURCES are required")
  endif()
  add_library(${target} STATIC ${arg_SOURCES})
  embscale_include_root(${target} ${arg_FOLDER} ${arg_INCLUDE_AS})
  target_link_libraries(${target} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE} embscale_warnings)
endfunction()

# The include root of `target`: build/include_roots/<target>/<prefix> links to <folder>.
function(embscale_include_root target folder prefix)
  set(root ${CMAKE_BINARY_DIR}/include_roots/${target})
  get_filename_component(parent ${root}/${prefix} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${root}/${prefix} SYMBOLIC)
  target_include_directories(${target} PUBLIC ${root})
endfunction()
