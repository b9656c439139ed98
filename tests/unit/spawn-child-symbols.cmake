# The post-clone child code (launcher/lib/spawn-child.c and privdrop.c) references no
# allocator, stdio or exit(): see tools/cmake/check-async-signal-safe.cmake
# for the list and why.
cordon_add_test(NAME check-spawn-child-async-signal-safe LABELS unit
  COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} "-DOBJECTS=$<TARGET_OBJECTS:cordon-spawn-child>"
          -P ${CMAKE_SOURCE_DIR}/tools/cmake/check-async-signal-safe.cmake)
