# Every dependency through a pkg-config imported target.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
pkg_check_modules(CAPNG REQUIRED IMPORTED_TARGET libcap-ng)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
if(CORDON_TESTS)
  # cmocka 1.1.5 ships no imported CMake target.
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()
