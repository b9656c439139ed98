# Allocation-failure injection for cordond's configuration loader (the file,
# the flags and the strict YAML layer under them): the allocator is wrapped
# at link time (-Wl,--wrap, alloc-fail.h), so this test gets its own
# registration.
cordon_add_test(NAME test-daemon-config-oom
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/daemon-config-oom.c ${CMAKE_CURRENT_LIST_DIR}/alloc-fail.c
  LABELS unit
  LIBS "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=reallocarray,--wrap=strdup,--wrap=strndup")
