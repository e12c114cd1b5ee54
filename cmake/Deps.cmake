# Third-party dependencies, all from Debian 12 packages (see scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(SQLiteCpp REQUIRED)
# zlib (zlib1g-dev): the store packs item bodies and event payloads (storage/packed_text.h).
find_package(ZLIB REQUIRED)
# libpq (libpq-dev): the PostgreSQL session store backend (storage/postgres_session_store.h).
find_package(PostgreSQL REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
# utf8proc (libutf8proc-dev): Unicode case folding and decomposition for search
# (storage/fts_tokenizer.h).
# The interactive UI: syntax colours of code blocks (GNU Source-highlight) and
# Unicode widths, grapheme clusters and line breaking (utf8proc, as above).
pkg_check_modules(SRCHILITE REQUIRED IMPORTED_TARGET source-highlight)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
if(CODEX_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
  # Catch2's implementation is compiled once (codex_catch_impl) and shared by
  # every test binary, with the one main (codex_catch_main); a test with its
  # own main links codex_catch_impl alone.
  add_library(codex_catch_impl STATIC ${PROJECT_SOURCE_DIR}/tests/catch_impl.cc)
  target_link_libraries(codex_catch_impl PUBLIC Catch2::Catch2)
  target_include_directories(codex_catch_impl PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(codex_catch_impl PRIVATE codex_warnings)
  add_library(codex_catch_main STATIC ${PROJECT_SOURCE_DIR}/tests/catch_main.cc)
  target_link_libraries(codex_catch_main PUBLIC codex_catch_impl)
  include(Catch)
endif()

# codex_add_test(NAME SOURCES... LIBS ...): a Catch2 binary registered with ctest.
function(codex_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE codex_catch_main codex_warnings ${T_LIBS})
  target_compile_definitions(${name} PRIVATE CODEX_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 4)
  codex_test_cost(${name})
endfunction()
