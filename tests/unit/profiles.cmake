# Every shipped profile passes `cordon-launch --check`, and the verb's output
# and exit status follow its contract (tests/unit/check-cli.sh).
file(GLOB _cordon_profiles CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/profiles/*.yaml)
cordon_add_test(NAME profiles-check
  COMMAND $<TARGET_FILE:cordon-launch> --check ${_cordon_profiles}
  LABELS unit)
cordon_add_test(NAME check-cli
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check-cli.sh $<TARGET_FILE:cordon-launch>
  LABELS unit)
