# End-to-end tests with real MCP peers from npm. The fixture installs them
# once per build tree; every e2e test that needs them REQUIRES it.
set(CORDON_E2E_NODE_DIR ${CMAKE_BINARY_DIR}/tests/e2e/node)
add_test(NAME e2e-npm-setup COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/npm-setup ${CORDON_E2E_NODE_DIR})
set_tests_properties(e2e-npm-setup PROPERTIES FIXTURES_SETUP npm LABELS e2e TIMEOUT 900)

cordon_add_test(NAME e2e-sdk-first-party LABELS e2e TIMEOUT 300
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/test-sdk-first-party ${CORDON_E2E_NODE_DIR})
set_tests_properties(e2e-sdk-first-party PROPERTIES FIXTURES_REQUIRED npm)

cordon_add_test(NAME e2e-sdk-through-cordond LABELS e2e TIMEOUT 300 RUN_SERIAL
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/test-sdk-through-cordond ${CORDON_E2E_NODE_DIR})
set_tests_properties(e2e-sdk-through-cordond PROPERTIES FIXTURES_REQUIRED npm)

# Resources of two server-everything connectors through cordond (issue 13).
cordon_add_test(NAME e2e-sdk-resources LABELS e2e TIMEOUT 300 RUN_SERIAL
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/test-sdk-resources ${CORDON_E2E_NODE_DIR})
set_tests_properties(e2e-sdk-resources PROPERTIES FIXTURES_REQUIRED npm)
