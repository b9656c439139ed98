# cordon-jcs command-line contract (exit codes, exact output, errors), and a
# differential test of the canonical form against V8 (node), whose
# JSON.stringify and Number::toString RFC 8785 is defined by.
cordon_add_test(NAME jcs-cli
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/jcs-cli.sh $<TARGET_FILE:cordon-jcs>
  LABELS unit TIMEOUT 120)
cordon_add_test(NAME jcs-node-differential
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/jcs-node-differential.sh $<TARGET_FILE:cordon-jcs>
  LABELS unit TIMEOUT 300)
