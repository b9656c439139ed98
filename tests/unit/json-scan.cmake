# test-json-scan tests tools/lib/json-scan.c, which lives in cordon-tools.
target_link_libraries(test-json-scan PRIVATE cordon-tools)
