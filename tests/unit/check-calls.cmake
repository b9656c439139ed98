# The files of each library call each other without a cycle: file A -> B
# when A's object uses a symbol B's object defines (tools/check-calls, over
# each library target's objects). Known cycles, each explained, are waived
# in tools/check-calls.waivers until they are broken.
cordon_add_test(NAME check-calls LABELS unit TIMEOUT 60
  COMMAND ${CMAKE_SOURCE_DIR}/tools/check-calls --nm ${CMAKE_NM}
          --waivers ${CMAKE_SOURCE_DIR}/tools/check-calls.waivers
          "launcher/basic=$<TARGET_OBJECTS:cordon-basic>"
          "launcher/lib=$<TARGET_OBJECTS:cordon>" "$<TARGET_OBJECTS:cordon-spawn-child>"
          "broker/lib=$<TARGET_OBJECTS:cordon-broker>"
          "broker/daemon=$<TARGET_OBJECTS:cordon-daemon>")
