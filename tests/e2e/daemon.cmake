# cordond end-to-end tests (label e2e): the daemon core in its own process,
# real connector processes, the gateway socket.
cordon_add_test(NAME test-daemon-e2e
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-daemon-e2e.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-daemon-e2e fake-connector cordonctl)

# The real binaries: cordond (drops to nobody, Landlock), the launcher helper
# (real sandboxes), cordonctl for every operator step.
cordon_add_test(NAME test-cordond
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-cordond fake-connector cordond cordonctl cordon-launch)
# The official TypeScript SDK (installed by e2e.cmake's npm fixture).
set_tests_properties(test-cordond PROPERTIES FIXTURES_REQUIRED npm)
set_property(TEST test-cordond APPEND PROPERTY ENVIRONMENT "CORDON_E2E_NODE_DIR=${CMAKE_BINARY_DIR}/tests/e2e/node")

cordon_add_test(NAME test-daemon-limits
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-daemon-limits.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 120)
add_dependencies(test-daemon-limits fake-connector cordonctl)

# Issue 13: the one-connector view (cordon/bind, `cordonctl mcp --connector`)
# beside the multiplexed one, on the real binaries; one check with the
# official SDK client (npm fixture).
cordon_add_test(NAME test-gateway-bound-view
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-gateway-bound-view.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-gateway-bound-view fake-connector cordond cordonctl cordon-launch)
set_tests_properties(test-gateway-bound-view PROPERTIES FIXTURES_REQUIRED npm)
set_property(TEST test-gateway-bound-view APPEND PROPERTY ENVIRONMENT "CORDON_E2E_NODE_DIR=${CMAKE_BINARY_DIR}/tests/e2e/node")

# A connector's JSON-RPC errors through the real cordond (issue 13).
cordon_add_test(NAME test-cordond-errors
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-errors.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 180)
add_dependencies(test-cordond-errors fake-connector cordond cordonctl cordon-launch)
set_tests_properties(test-cordond-errors PROPERTIES FIXTURES_REQUIRED npm)
set_property(TEST test-cordond-errors APPEND PROPERTY ENVIRONMENT "CORDON_E2E_NODE_DIR=${CMAKE_BINARY_DIR}/tests/e2e/node")

# A connector's log messages through the real cordond (issue 13, Logging).
cordon_add_test(NAME test-cordond-logging
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-logging.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 180)
add_dependencies(test-cordond-logging fake-connector cordond cordonctl cordon-launch)

# Tasks (MCP 2025-11-25) through the real cordond (issue 13): pass-through,
# approvals held as tasks, isolation between sessions.
cordon_add_test(NAME test-cordond-tasks
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-tasks.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 180)
add_dependencies(test-cordond-tasks fake-connector cordond cordonctl cordon-launch)
# Resources through the real cordond (issue 13, Resources and pagination):
# reads without listing, namespaced URIs, templates, subscriptions, pages.
cordon_add_test(NAME test-cordond-resources
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-resources.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 180)
add_dependencies(test-cordond-resources fake-connector cordond cordonctl cordon-launch)

# Operations (issue 17) on the real binaries: /metrics through promtool
# (Debian's prometheus package), reload (SIGHUP, `cordonctl reload`) and
# signals.
cordon_add_test(NAME test-cordond-ops
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-ops.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 180)
add_dependencies(test-cordond-ops fake-connector cordond cordonctl cordon-launch)

# Issue 18: MCP Streamable HTTP on mcp-http.sock (the real binaries).
cordon_add_test(NAME test-mcp-http
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-mcp-http.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-mcp-http fake-connector cordond cordonctl cordon-launch)
set_tests_properties(test-mcp-http PROPERTIES FIXTURES_REQUIRED npm)
set_property(TEST test-mcp-http APPEND PROPERTY ENVIRONMENT "CORDON_E2E_NODE_DIR=${CMAKE_BINARY_DIR}/tests/e2e/node")
# cordond's own log (issue 17, Logs): levels (journald "<N>" prefixes when
# JOURNAL_STREAM names stderr), the operator events with their ids, no
# argument value or credential in it.
cordon_add_test(NAME test-cordond-log-events
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-log-events.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 240)
add_dependencies(test-cordond-log-events fake-connector cordond cordonctl cordon-launch)

# Issue 18: MCP over loopback TCP with agents' bearer tokens.
cordon_add_test(NAME test-mcp-http-tcp
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-mcp-http-tcp.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-mcp-http-tcp fake-connector cordond cordonctl cordon-launch)
set_tests_properties(test-mcp-http-tcp PROPERTIES FIXTURES_REQUIRED npm)
set_property(TEST test-mcp-http-tcp APPEND PROPERTY ENVIRONMENT "CORDON_E2E_NODE_DIR=${CMAKE_BINARY_DIR}/tests/e2e/node")

# Issue 18: MCP over TLS on a routable address, in a network namespace of
# the test's own (only loopback up).
cordon_add_test(NAME test-mcp-http-tls
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-mcp-http-tls.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-mcp-http-tls fake-connector cordond cordonctl cordon-launch)
set_tests_properties(test-mcp-http-tls PROPERTIES FIXTURES_REQUIRED npm)
set_property(TEST test-mcp-http-tls APPEND PROPERTY ENVIRONMENT "CORDON_E2E_NODE_DIR=${CMAKE_BINARY_DIR}/tests/e2e/node")
