# e2e for the launcher: the real @modelcontextprotocol/server-filesystem from
# npm (installed by the e2e-npm-setup fixture of e2e.cmake into
# <build>/tests/e2e/node), under profiles/filesystem.yaml, inside a real
# sandbox built by cordon_spawn().
cordon_add_test(NAME e2e-spawn-filesystem
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/e2e/e2e-spawn-filesystem.c
  LABELS e2e RUN_SERIAL
  ENV "CORDON_E2E_NODE_PREFIX=${CMAKE_BINARY_DIR}/tests/e2e/node")
set_tests_properties(e2e-spawn-filesystem PROPERTIES FIXTURES_REQUIRED npm)
target_include_directories(e2e-spawn-filesystem PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/kernel)
