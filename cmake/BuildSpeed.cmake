# Build-time knobs (docs/ci.md has the measurements behind them).
#
# CODEX_DEBUG_INFO: "" keeps the build type's -g; 0 drops debug info (the CI
# main job: nobody runs a debugger there), 1 keeps line tables only (enough for
# the file:line of sanitizer stack traces). Appended after the build type's
# flags, so the last -g wins.
set(CODEX_DEBUG_INFO "" CACHE STRING "Debug info level: empty = the build type's, 0, 1 or 2")
if(NOT CODEX_DEBUG_INFO STREQUAL "")
  if(NOT CODEX_DEBUG_INFO MATCHES "^[0-3]$")
    message(FATAL_ERROR "CODEX_DEBUG_INFO must be empty, 0, 1, 2 or 3 (got '${CODEX_DEBUG_INFO}')")
  endif()
  add_compile_options(-g${CODEX_DEBUG_INFO})
endif()

# CODEX_PCH: nlohmann/json (reached by most translation units through
# core/item.h), Catch2 and the standard headers everyone includes are parsed
# once per build into two precompiled headers, one for code and one for
# tests, which every C++ target of ours reuses (codex_use_pch below). Measured
# (docs/ci.md): -17% CPU per file in an -O0 build (the ASan job), nothing at
# -O2, where code generation dominates; so on by default for Debug builds only.
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(codex_pch_default ON)
else()
  set(codex_pch_default OFF)
endif()
option(CODEX_PCH "Precompile the heavy shared headers once per build" ${codex_pch_default})
if(CODEX_FUZZ)
  # The fuzz build compiles a few files with per-target sanitizer flags a
  # shared precompiled header cannot match.
  set(CODEX_PCH OFF)
endif()

if(CODEX_PCH AND CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
  # ccache caches a compile that uses a precompiled header only with this
  # sloppiness; set here (before any target exists) so every ccache user,
  # through the scripts or plain ninja, keeps hitting.
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros
      ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

# Every C++ target defined under `dir` (recursively) into `out`.
function(codex_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    codex_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Called once at the end of the top-level CMakeLists.txt: every executable and
# library of ours reuses codex_pch, every Catch2 binary codex_pch_test. The
# targets that compile Catch2's implementation (codex_catch_impl) must see
# catch.hpp after their own #define, so they keep no precompiled header.
function(codex_use_pch)
  if(NOT CODEX_PCH)
    return()
  endif()
  set(std_headers
    <algorithm> <chrono> <cstdint> <filesystem> <fstream> <functional> <map> <memory>
    <mutex> <optional> <set> <sstream> <string> <string_view> <thread> <unordered_map>
    <utility> <variant> <vector>)
  add_library(codex_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cc)
  target_link_libraries(codex_pch PRIVATE codex_warnings nlohmann_json::nlohmann_json)
  target_precompile_headers(codex_pch PRIVATE ${std_headers} <nlohmann/json.hpp>)
  if(TARGET Catch2::Catch2)
    add_library(codex_pch_test OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cc)
    target_link_libraries(codex_pch_test PRIVATE codex_warnings nlohmann_json::nlohmann_json
                                                 Catch2::Catch2)
    target_precompile_headers(codex_pch_test PRIVATE
      ${std_headers} <nlohmann/json.hpp> <catch2/catch.hpp>)
  endif()

  codex_collect_targets(${PROJECT_SOURCE_DIR} targets)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$"
       OR t MATCHES "^codex_pch" OR t STREQUAL "codex_catch_impl")
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(libs AND ("codex_catch_main" IN_LIST libs OR "codex_catch_impl" IN_LIST libs
                 OR "Catch2::Catch2" IN_LIST libs))
      target_precompile_headers(${t} REUSE_FROM codex_pch_test)
    else()
      target_precompile_headers(${t} REUSE_FROM codex_pch)
    endif()
  endforeach()
endfunction()

# ctest starts the tests of highest COST first. Without timings of an earlier
# run (a fresh CI clone has none; later runs use Testing/Temporary/
# CTestCostData.txt) it would start them in definition order and the long
# end-to-end tests, defined last, would run alone at the end. Seconds of an
# ASan run; postgres_e2e_test leads because 62 s of it is the real wait for a
# lease's heartbeat to go stale, which overlaps with the other tests.
set(codex_test_costs
  postgres_e2e_test 120 store_e2e_test 100 compaction_e2e_test 90 escape_e2e_test 47
  parity_e2e_test 36 interactive_e2e_test 27 sessions_cmd_test 25 mcp_e2e_test 21
  store_backend_e2e_test 19 sandbox_confinement_test 18 tool_safety_e2e_test 17
  tools_e2e_test 16 lease_e2e_test 14 scripted_server_test 12 parity_reference_e2e_test 12
  compaction_simulation_test 11 history_e2e_test 11 exec_e2e_test 10)

# Called by codex_add_test: the test's COST from the table above.
function(codex_test_cost name)
  list(FIND codex_test_costs ${name} i)
  if(i GREATER_EQUAL 0)
    math(EXPR i "${i} + 1")
    list(GET codex_test_costs ${i} cost)
    set_tests_properties(${name} PROPERTIES COST ${cost})
  endif()
endfunction()
