# The cgroup2 no-internal-processes fallback on the fake cgroupfs of
# tests/unit/cgroup-fakefs.c (root: the child moves itself into a real
# cgroup2 cgroup so that its own path is not the root).
cordon_add_test(NAME test-cgroup-v2-busy
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/cgroup-v2-busy.c ${CMAKE_SOURCE_DIR}/tests/unit/cgroup-fakefs.c
  LABELS kernel
  LIBS "-Wl,--wrap=mkdir,--wrap=rmdir,--wrap=write"
  RUN_SERIAL)
