# Every dependency through a pkg-config imported target. The minimum versions
# are the oldest the project is built and tested against (Debian 12's); older
# ones may work but nobody has checked.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp>=2.5.4)
pkg_check_modules(CAPNG REQUIRED IMPORTED_TARGET libcap-ng>=0.8.3)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.1)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3>=3.40)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium>=1.0.18)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson>=2.14)
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1>=0.2.5)
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd>=0.9.75)
if(CORDON_TESTS)
  # cmocka 1.1.5 ships no imported CMake target.
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka>=1.1.5)
endif()
