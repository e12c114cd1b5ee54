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

# CODEX_TEST_O0: in an optimized build, the test code (unit tests, tests/,
# testing/, the scripted server, Catch2's implementation) is compiled at -O0
# while the shipped libraries and programs keep the build type's -O2: the -O2
# warnings and the benches are about those (the benches' helpers from testing/
# only set up: temporary directories, the private PostgreSQL server). The
# scripted server, which answers the requests the benches time, keeps -O2. Measured
# (docs/ci.md): a test file compiles in half the CPU time at -O0 with the
# precompiled header. The tests spend their run time in the -O2 codex binary and
# libraries.
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(codex_test_o0_default OFF)  # everything is -O0 already
else()
  set(codex_test_o0_default ON)
endif()
option(CODEX_TEST_O0 "Compile test code at -O0 in optimized builds" ${codex_test_o0_default})

# CODEX_PCH: nlohmann/json (reached by most translation units through
# core/item.h), Catch2 and the standard headers everyone includes are parsed
# once per build into two precompiled headers, one for code and one for
# tests, which the -O0 targets reuse (codex_use_pch below). Measured
# (docs/ci.md): -17% CPU per file at -O0, nothing at -O2, where code
# generation dominates. So: every target of a Debug build (the ASan job), only
# the -O0 test targets (CODEX_TEST_O0) of an optimized one.
option(CODEX_PCH "Precompile the heavy shared headers for the -O0 targets" ON)

# CODEX_UNITY: the test binaries of several files compile as one translation
# unit (CMake's unity build), so Catch2, nlohmann/json and our headers are
# parsed, and their inline functions compiled, once per test binary instead of
# once per file (measured in docs/ci.md). Names at file scope of a test file
# (anonymous namespaces included) must then be distinct within its binary.
option(CODEX_UNITY "Compile each multi-file test binary as one translation unit" ON)
# Files whose file-scope helpers share a name with a helper of another file of
# the same binary; they stay translation units of their own.
set(codex_unity_skip
  storage/maintenance_test.cc storage/search_parity_test.cc
  tests/scripted_server/invariants.cc tests/scripted_server/scripted_server.cc)
# CODEX_UNITY_LIBS: the shipped libraries and the codex program compile in
# batches of 8 files (CMake's unity build), in every build type. Their files
# define no two file-scope helpers of one name (the one home for each is
# base/; a helper that genuinely differs has a name of its own), so a batch
# compiles as its files do alone; the batches are a build-time measure only:
# about half the CPU time of the -O2 library compiles (docs/ci.md). OFF gives
# one translation unit per file back.
option(CODEX_UNITY_LIBS "Compile the shipped libraries and programs in batches of 8 files" ON)
set(codex_unity_lib_targets
  codex_base codex_sandbox codex_core codex_storage_schema codex_storage codex_compaction
  codex_mcp codex_tui codex_viewer codex_cli_compat codex_cli codex)
if(CODEX_FUZZ)
  # The fuzz build compiles a few files with per-target sanitizer flags a
  # shared precompiled header cannot match.
  set(CODEX_PCH OFF)
  set(CODEX_TEST_O0 OFF)
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

# Called once at the end of the top-level CMakeLists.txt: every C++ target
# of ours with its source files (relative to the source root) and the targets
# it links, written to <build>/codex_targets.txt for tests/dependency_rule_test
# (the dependency rule read from the build's targets, not from file names):
#   target NAME DIR
#   source PATH
#   link TARGET
function(codex_write_target_map)
  codex_collect_targets(${PROJECT_SOURCE_DIR} all_targets)
  set(out "")
  foreach(t ${all_targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|INTERFACE_LIBRARY)$")
      continue()
    endif()
    get_target_property(dir ${t} SOURCE_DIR)
    file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${dir})
    string(APPEND out "target ${t} ${rel_dir}\n")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(sources ${t} SOURCES)
      foreach(s ${sources})
        if(NOT IS_ABSOLUTE ${s})
          set(s ${dir}/${s})
        endif()
        file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${s})
        if(NOT rel MATCHES "^\\.\\.")
          string(APPEND out "source ${rel}\n")
        endif()
      endforeach()
      get_target_property(libs ${t} LINK_LIBRARIES)
    else()
      get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
    endif()
    foreach(l ${libs})
      if(TARGET ${l})
        string(APPEND out "link ${l}\n")
      endif()
    endforeach()
  endforeach()
  file(WRITE ${CMAKE_BINARY_DIR}/codex_targets.txt "${out}")
endfunction()

# Test code kept at the build type's -O2 whatever CODEX_TEST_O0 says: the
# scripted Responses server is the endpoint bench/exec_bench times codex (and
# the real Codex 0.169) against, so its CPU time is inside every measured
# request. At -O0 it spent ~2.75 ms of CPU on each request (nlohmann/json's
# parser and std::string uninlined), the larger part of each of a one-call
# turn's two round trips; at -O2 it is a fraction of that. codex_e2e_support
# too: exec_bench links it before the server, and the linker keeps its copies
# of the json and string templates the server shares.
set(codex_measuring_targets codex_scripted_server scripted-responses-server codex_e2e_support)

# Test code (CODEX_TEST_O0): the Catch2 binaries, everything defined in
# tests/ and testing/, and the test support libraries.
function(codex_is_test_target t out)
  get_target_property(dir ${t} SOURCE_DIR)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
  if(t MATCHES "_test$" OR rel MATCHES "^(tests|testing)(/|$)"
     OR t MATCHES "^codex_(catch_impl|catch_main|storage_testing)$")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Called once at the end of the top-level CMakeLists.txt: the test targets of
# an optimized build get -O0 (CODEX_TEST_O0); every -O0 executable and library
# of ours reuses codex_pch, every -O0 Catch2 binary codex_pch_test. The
# targets that compile Catch2's implementation (codex_catch_impl) must see
# catch.hpp after their own #define, so they keep no precompiled header.
function(codex_use_pch)
  set(test_o0 ${CODEX_TEST_O0})
  if(CMAKE_BUILD_TYPE STREQUAL "Debug")
    set(test_o0 OFF)
  endif()
  codex_collect_targets(${PROJECT_SOURCE_DIR} all_targets)
  set(targets)
  foreach(t ${all_targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    if(CODEX_UNITY AND NOT CODEX_FUZZ AND t IN_LIST codex_unity_lib_targets
       AND (CODEX_UNITY_LIBS OR CMAKE_BUILD_TYPE STREQUAL "Debug"))
      set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
      foreach(f ${codex_unity_skip})
        set_source_files_properties(${PROJECT_SOURCE_DIR}/${f} TARGET_DIRECTORY ${t}
                                    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endforeach()
    endif()
    if(test_o0)
      codex_is_test_target(${t} is_test)
      if(NOT is_test OR t IN_LIST codex_measuring_targets)
        continue()  # shipped code: the build type's -O2, no precompiled header
      endif()
      target_compile_options(${t} PRIVATE -O0)
    endif()
    if(CODEX_UNITY AND NOT CODEX_FUZZ)
      codex_is_test_target(${t} is_test)
      get_target_property(sources ${t} SOURCES)
      list(LENGTH sources n_sources)
      if(is_test AND n_sources GREATER 1)
        set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
        foreach(f ${codex_unity_skip})
          set_source_files_properties(${PROJECT_SOURCE_DIR}/${f} TARGET_DIRECTORY ${t}
                                      PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
        endforeach()
      endif()
    endif()
    list(APPEND targets ${t})
  endforeach()
  if(NOT CODEX_PCH OR NOT (test_o0 OR CMAKE_BUILD_TYPE STREQUAL "Debug"))
    return()
  endif()

  set(std_headers
    <algorithm> <chrono> <cstdint> <filesystem> <fstream> <functional> <map> <memory>
    <mutex> <optional> <set> <sstream> <string> <string_view> <thread> <unordered_map>
    <utility> <variant> <vector>)
  add_library(codex_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cc)
  target_link_libraries(codex_pch PRIVATE codex_warnings nlohmann_json::nlohmann_json)
  target_precompile_headers(codex_pch PRIVATE ${std_headers} <nlohmann/json.hpp>)
  set(pch_targets codex_pch)
  if(TARGET Catch2::Catch2)
    add_library(codex_pch_test OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cc)
    target_link_libraries(codex_pch_test PRIVATE codex_warnings nlohmann_json::nlohmann_json
                                                 Catch2::Catch2)
    target_precompile_headers(codex_pch_test PRIVATE
      ${std_headers} <nlohmann/json.hpp> <catch2/catch.hpp>)
    list(APPEND pch_targets codex_pch_test)
  endif()
  if(test_o0)
    foreach(p ${pch_targets})
      target_compile_options(${p} PRIVATE -O0)  # as the targets that use them
    endforeach()
  endif()

  foreach(t ${targets})
    if(t STREQUAL "codex_catch_impl")
      continue()
    endif()
    # The modules loaded on demand (codex-highlight.so, codex-viewer-http.so) are
    # built -fPIC, which a header precompiled for the programs cannot serve.
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "MODULE_LIBRARY" OR type STREQUAL "SHARED_LIBRARY")
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
# ASan run.
set(codex_test_costs
  postgres_e2e_test 55 store_e2e_test 100 compaction_e2e_test 90 escape_e2e_test 47
  parity_e2e_test 36 interactive_e2e_test 27 sessions_cmd_test 25 mcp_e2e_test 21
  store_backend_e2e_test 19 sandbox_confinement_test 18 tool_safety_e2e_test 17
  tools_e2e_test 16 lease_e2e_test 14 scripted_server_test 12 parity_reference_e2e_test 12
  compaction_simulation_test 11 history_e2e_test 11 exec_e2e_test 10
  viewer_e2e_test 30 viewer_postgres_e2e_test 15 interactive_daily_e2e_test 100)

# Called by codex_add_test: the test's COST from the table above.
function(codex_test_cost name)
  list(FIND codex_test_costs ${name} i)
  if(i GREATER_EQUAL 0)
    math(EXPR i "${i} + 1")
    list(GET codex_test_costs ${i} cost)
    set_tests_properties(${name} PROPERTIES COST ${cost})
  endif()
endfunction()
