# e2e for the launcher: the real @modelcontextprotocol/server-filesystem from
# npm, under profiles/filesystem.yaml, inside a real sandbox. The npm packages
# are installed once by the npm-setup fixture into <build>/tests/e2e/node.
set(CORDON_E2E_NODE_PREFIX ${CMAKE_BINARY_DIR}/tests/e2e/node)

if(NOT TEST e2e-npm-setup)
  cordon_add_test(NAME e2e-npm-setup
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/npm-setup ${CORDON_E2E_NODE_PREFIX}
    LABELS e2e TIMEOUT 600)
  set_tests_properties(e2e-npm-setup PROPERTIES FIXTURES_SETUP cordon_npm)
endif()

cordon_add_test(NAME e2e-spawn-filesystem
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/e2e/e2e-spawn-filesystem.c
  LABELS e2e RUN_SERIAL
  ENV "CORDON_E2E_NODE_PREFIX=${CORDON_E2E_NODE_PREFIX}")
set_tests_properties(e2e-spawn-filesystem PROPERTIES FIXTURES_REQUIRED cordon_npm)
target_include_directories(e2e-spawn-filesystem PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/kernel)
