# The shared fuzz rules compile only the fuzz target itself with
# -fsanitize=fuzzer; without coverage instrumentation in the library under
# test libFuzzer is blind (a dozen edges, no corpus growth). Instrument
# libcordon-broker (canon, crypto, merkle, checkpoint, ...) in fuzz builds.
if(CORDON_FUZZ AND TARGET cordon-broker)
  get_target_property(_cb_type cordon-broker TYPE)
  if(NOT _cb_type STREQUAL "INTERFACE_LIBRARY")
    target_compile_options(cordon-broker PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endif()
