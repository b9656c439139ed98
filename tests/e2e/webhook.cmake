# Approval notifications (issue 14) on the real binaries: `cordonctl
# approvals watch` and the approval webhook to a loopback receiver (a child
# of the test), signatures checked with libsodium, bounded retries.
cordon_add_test(NAME test-cordond-webhook
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-cordond-webhook.c
  LABELS e2e LIBS cordon-test-harness RUN_SERIAL TIMEOUT 180)
add_dependencies(test-cordond-webhook fake-connector cordond cordonctl cordon-launch)
