# The operator surfaces against the real cordond (label e2e): cordonctl for
# every operator step, `cordonctl mcp` as the agent's stdio bridge, and
# `curl --unix-socket` on /health, /health/detail and /metrics.
cordon_add_test(NAME test-operator-e2e
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-operator-e2e.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 300)
add_dependencies(test-operator-e2e fake-connector cordond cordonctl cordon-launch)
