# @modelcontextprotocol/server-memory (from the npm fixture) under a copy of
# profiles/memory.yaml, through the real cordond, launcher helper and
# cordonctl (label e2e).
cordon_add_test(NAME test-cordond-memory
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-memory.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-cordond-memory cordond cordonctl cordon-launch)
set_tests_properties(test-cordond-memory PROPERTIES FIXTURES_REQUIRED npm)
set_property(TEST test-cordond-memory APPEND PROPERTY ENVIRONMENT "CORDON_E2E_NODE_DIR=${CMAKE_BINARY_DIR}/tests/e2e/node")
