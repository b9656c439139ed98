# Allocation-failure injection for the profile loader: the allocator is
# wrapped at link time (-Wl,--wrap, alloc-fail.h), so this test gets its own
# registration.
cordon_add_test(NAME test-profile-oom
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/profile-oom.c ${CMAKE_CURRENT_LIST_DIR}/alloc-fail.c
  LABELS unit
  LIBS "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=reallocarray,--wrap=strdup,--wrap=strndup")
