# test-canon-fast once more with canon-fast.c compiled into the test using
# the portable (SWAR) string scanner instead of SSE2, so both scanners run on
# x86-64, and with the decimal-to-double estimate made off by up to two ulps,
# so its exact correction (ties included) runs on every number. The test's
# own copy of the file takes the place of the library's.
cordon_add_test(NAME test-canon-fast-swar
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test-canon-fast.c ${CMAKE_SOURCE_DIR}/broker/lib/canon-fast.c
  LABELS unit)
target_compile_definitions(test-canon-fast-swar PRIVATE CORDON_CANON_FAST_SWAR CORDON_CANON_FAST_TEST_ESTIMATE)
