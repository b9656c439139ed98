# The pure-v2 path of the cgroup module on a fake cgroupfs (this machine is
# hybrid, so memory/pids/cpu never appear in its cgroup2 hierarchy). mkdir
# and rmdir are wrapped so new directories get cgroup-like control files.
cordon_add_test(NAME test-cgroup-v2-fake
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/cgroup-v2-fake.c ${CMAKE_CURRENT_LIST_DIR}/cgroup-fakefs.c
  LABELS unit
  LIBS "-Wl,--wrap=mkdir,--wrap=rmdir")
