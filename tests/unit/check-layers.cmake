# The include graph of launcher/ and broker/ keeps its layers: no upward
# edge, no cycle inside a layer, no logging in the libraries
# (tools/check-layers).
cordon_add_test(NAME check-layers COMMAND ${CMAKE_SOURCE_DIR}/tools/check-layers ${CMAKE_SOURCE_DIR}
  LABELS unit TIMEOUT 60)
