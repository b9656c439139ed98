# The installed layout (`cmake --install`) and the Debian package built from
# it (`cpack -G DEB`, the same install rules): docs/operator-guide.md,
# "Install". Paths follow GNUInstallDirs; with -DCMAKE_INSTALL_PREFIX=/usr
# (what the package is built with) that is:
#   /usr/bin/{cordond,cordonctl,cordon-launch,cordon-fs,cordon-exec,...}
#   /usr/libexec/cordon/cordon-launch          cordond's helper (CORDON_LIBEXEC_LAUNCH)
#   /etc/cordon/cordond.yaml                   conffile; /etc/cordon/profiles/ (empty)
#   /lib/systemd/system/cordond.service        the unit, configured with these paths
#   /usr/lib/sysusers.d/cordon.conf, /usr/lib/tmpfiles.d/cordon.conf
#   /usr/share/cordon/profiles/*.yaml          the sample profiles
#   /usr/share/man/man{1,5,8}/*.gz             from docs/man/*.scd (scdoc)
#   /usr/share/bash-completion/completions/, /usr/share/zsh/vendor-completions/
#   /usr/share/doc/cordon/                     docs/*.md, README.md, copyright, changelog
# The binaries carry install paths (CORDON_LIBEXEC_LAUNCH): build the package
# from a tree configured with the prefix it installs to. A DEB built from
# another prefix is refused at cpack time.

option(CORDON_MAN "Build the man pages (needs scdoc)" ON)

# ---- The systemd unit, sysusers.d, tmpfiles.d, the config -------------------
set(CORDON_CONFIG_FILE "${CMAKE_INSTALL_FULL_SYSCONFDIR}/cordon/cordond.yaml")
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  # Debian 12's systemd.pc says /lib/systemd/system (merged /usr or not).
  set(_unitdir_default "/lib/systemd/system")
  set(_libdir_systemd "/usr/lib")
else()
  set(_unitdir_default "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
  set(_libdir_systemd "${CMAKE_INSTALL_PREFIX}/lib")
endif()
set(CORDON_SYSTEMD_UNITDIR "${_unitdir_default}" CACHE PATH "Where cordond.service is installed")
set(CORDON_SYSUSERSDIR "${_libdir_systemd}/sysusers.d" CACHE PATH "Where sysusers.d/cordon.conf is installed")
set(CORDON_TMPFILESDIR "${_libdir_systemd}/tmpfiles.d" CACHE PATH "Where tmpfiles.d/cordon.conf is installed")

configure_file(${CMAKE_SOURCE_DIR}/tools/systemd/cordond.service.in
  ${CMAKE_BINARY_DIR}/package/cordond.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/cordond.service DESTINATION ${CORDON_SYSTEMD_UNITDIR})
install(FILES ${CMAKE_SOURCE_DIR}/tools/systemd/cordon.sysusers DESTINATION ${CORDON_SYSUSERSDIR}
  RENAME cordon.conf)
install(FILES ${CMAKE_SOURCE_DIR}/tools/systemd/cordon.tmpfiles DESTINATION ${CORDON_TMPFILESDIR}
  RENAME cordon.conf)
install(FILES ${CMAKE_SOURCE_DIR}/tools/systemd/cordond.yaml
  DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/cordon)
# The operator's profiles directory: root-owned 0755 (the launcher helper
# refuses one that anyone but root can write). Empty: copy the profiles you
# want from the samples.
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/cordon/profiles
  DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)

# ---- Sample profiles ----------------------------------------------------------
# The first-party connectors' profiles name their binary by absolute path
# (no PATH lookup in a sandbox): the tree says /usr/local/bin, the installed
# copy says where this build installs them.
file(GLOB _profiles CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/profiles/*.yaml)
foreach(p ${_profiles})
  get_filename_component(_n ${p} NAME)
  file(READ ${p} _text)
  string(REPLACE "/usr/local/bin/cordon-" "${CMAKE_INSTALL_FULL_BINDIR}/cordon-" _text "${_text}")
  string(REPLACE "installs cordon-fs to /usr/local/bin." "installs cordon-fs to ${CMAKE_INSTALL_FULL_BINDIR}." _text "${_text}")
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/package/profiles/${_n} CONTENT "${_text}")
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${p})
  install(FILES ${CMAKE_BINARY_DIR}/package/profiles/${_n} DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon/profiles)
endforeach()

# ---- Man pages (docs/man/*.scd -> roff, gzip -9n) -----------------------------
if(CORDON_MAN)
  find_program(SCDOC scdoc)
  find_program(GZIP gzip REQUIRED)
  if(NOT SCDOC)
    message(FATAL_ERROR "scdoc not found: it renders the man pages (docs/man/*.scd). "
      "Install it (tools/install-deps; Debian package scdoc) or configure with -DCORDON_MAN=OFF.")
  endif()
  file(GLOB _man_src CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/*.scd)
  set(_man_out)
  foreach(src ${_man_src})
    get_filename_component(_page ${src} NAME_WLE) # cordond.8
    string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" _sec ${_page})
    set(_gz ${CMAKE_BINARY_DIR}/man/${_page}.gz)
    add_custom_command(OUTPUT ${_gz}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND ${SCDOC} < ${src} > ${CMAKE_BINARY_DIR}/man/${_page}
      COMMAND ${GZIP} -9nf ${CMAKE_BINARY_DIR}/man/${_page}
      DEPENDS ${src} VERBATIM)
    list(APPEND _man_out ${_gz})
    install(FILES ${_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${_sec})
  endforeach()
  add_custom_target(man ALL DEPENDS ${_man_out})
endif()

# ---- Shell completion -------------------------------------------------------
foreach(cmd cordonctl cordond cordon-launch)
  install(FILES ${CMAKE_SOURCE_DIR}/tools/completion/cordon.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${cmd})
endforeach()
install(FILES ${CMAKE_SOURCE_DIR}/tools/completion/_cordon DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

# ---- Docs ---------------------------------------------------------------------
set(CORDON_DEB_VERSION "${PROJECT_VERSION}-1")
set(CORDON_DEB_MAINTAINER "cordon maintainers <maintainers@users.noreply.a-seed-62f02e10.example>")
string(TIMESTAMP CORDON_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_SOURCE_DIR}/tools/package/changelog.in ${CMAKE_BINARY_DIR}/package/changelog.Debian @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/package/changelog.Debian.gz
  COMMAND ${GZIP} -9nkf ${CMAKE_BINARY_DIR}/package/changelog.Debian
  DEPENDS ${CMAKE_BINARY_DIR}/package/changelog.Debian VERBATIM)
add_custom_target(package-changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/package/changelog.Debian.gz)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/tools/package/copyright
  ${CMAKE_BINARY_DIR}/package/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# ---- CPack: the .deb ----------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cordon)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${CORDON_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "kernel sandbox and authorization broker for MCP connectors")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The extended description (CPack puts the summary above it).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "cordon runs the tool servers that AI agents call (MCP connectors) inside
kernel sandboxes (namespaces, Landlock, seccomp, cgroup limits, an eBPF
egress policy), and its broker, cordond, decides every call they may make:
per-connector grants, one-use operator approvals bound to the exact
arguments, and a hash-chained, signed audit log.")
# Runtime libraries from the binaries (dpkg-shlibdeps): never a -dev package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# postinst creates the user and group with systemd-sysusers, or with adduser
# where systemd is absent (adduser is priority important: always there).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
file(WRITE ${CMAKE_BINARY_DIR}/package/conffiles "${CORDON_CONFIG_FILE}\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_BINARY_DIR}/package/conffiles
  ${CMAKE_SOURCE_DIR}/tools/package/postinst
  ${CMAKE_SOURCE_DIR}/tools/package/prerm
  ${CMAKE_SOURCE_DIR}/tools/package/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_SOURCE_IGNORE_FILES "/build.*/;/\\\\.git/")
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  # The binaries would look for their helper under the wrong prefix.
  set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/package/cpack-refuse.cmake)
  file(WRITE ${CPACK_PROJECT_CONFIG_FILE}
    "message(FATAL_ERROR \"cordon: the .deb is built from a tree configured with -DCMAKE_INSTALL_PREFIX=/usr (this one: ${CMAKE_INSTALL_PREFIX}); the binaries carry their install paths\")\n")
endif()
include(CPack)
