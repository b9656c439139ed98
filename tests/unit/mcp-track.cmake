# test-mcp-track tests tools/lib/mcp-track.c, which lives in cordon-tools.
target_link_libraries(test-mcp-track PRIVATE cordon-tools)
