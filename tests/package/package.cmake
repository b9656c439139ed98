# The Debian package: built from this source with cpack, inspected, installed
# on this machine with dpkg, run, removed and purged (tests/package/test-deb).
# Serial: it installs into /usr, /etc, /var/lib and /run/cordon, and builds a
# tree of its own with -j2.
cordon_add_test(NAME test-deb
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/test-deb
  LABELS package TIMEOUT 1800 RUN_SERIAL)
