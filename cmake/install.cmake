# SPDX-License-Identifier: MIT
# Installation: headers, libtessera (shared and static), the `tessera`
# command line, and the two ways for other projects to find them: a CMake
# package (find_package(tessera) -> tessera::tessera, tessera::tessera_static,
# tessera::plugin) and pkg-config files (tessera.pc; tessera-plugin.pc for
# plugins). Bundled plugins install
# themselves (plugins/CMakeLists.txt) into <libdir>/tessera/plugins.
include(CMakePackageConfigHelpers)

set(TESSERA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
set(TESSERA_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/tessera/plugins)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessera
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${TESSERA_GENERATED_INCLUDE_DIR}/tessera/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera)

install(TARGETS tessera tessera_static tessera_plugin_abi
  EXPORT tesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(TARGET tessera_cli)
  # Find libtessera next to the installed binary, wherever the prefix is.
  set_property(TARGET tessera_cli APPEND PROPERTY
    INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT tesseraTargets
  NAMESPACE tessera::
  FILE tesseraTargets.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/tesseraConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR TESSERA_INSTALL_PLUGINDIR)
# 0.x: a new minor version may break the API, so only the same minor matches.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/tesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/tesseraConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/tesseraConfigVersion.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKEDIR})

# Private dependencies of libtessera.a, for `pkg-config --static`. A new
# dependency of the library must be added here and in tesseraConfig.cmake.in.
set(TESSERA_PC_REQUIRES_PRIVATE "jansson libffi liburing liblz4 libxxhash")
set(TESSERA_PC_LIBS_PRIVATE "-ldl -lpthread -lrt -lm")

# The .pc file finds its prefix from its own place (${pcfiledir}), so that
# `cmake --install --prefix ...` and moved trees work; absolute install dirs
# are kept as given.
set(TESSERA_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${TESSERA_PC_DIR}")
  set(TESSERA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH tessera_pc_up "/root/${TESSERA_PC_DIR}" "/root")
  string(REGEX REPLACE "/$" "" tessera_pc_up "${tessera_pc_up}")
  set(TESSERA_PC_PREFIX "\${pcfiledir}/${tessera_pc_up}")
endif()
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(TESSERA_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(TESSERA_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/tessera.pc.in
  ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc DESTINATION ${TESSERA_PC_DIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/tessera-plugin.pc.in
  ${CMAKE_CURRENT_BINARY_DIR}/tessera-plugin.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera-plugin.pc DESTINATION ${TESSERA_PC_DIR})
