# SPDX-License-Identifier: MIT
# Installation: headers, libtessera (shared and static), the `tessera`
# command line, and the two ways for other projects to find them: a CMake
# package (find_package(tessera) -> tessera::tessera, tessera::tessera_static,
# tessera::plugin) and pkg-config files (tessera.pc; tessera-plugin.pc for
# plugins). Bundled plugins install
# themselves (plugins/CMakeLists.txt) into <libdir>/tessera/plugins.
# The same two are written for the build tree as it stands (build/lib/cmake/
# tessera, build/lib/pkgconfig): the headers of the sources and the build,
# the libraries of the build. Everything a program or plugin builds against,
# with the command line and the worker, is the install component
# tessera_sdk, which the Python package's wheel ships too.
include(CMakePackageConfigHelpers)

set(TESSERA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
set(TESSERA_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/tessera/plugins)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessera
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT tessera_sdk
  FILES_MATCHING PATTERN "*.h")
install(FILES ${TESSERA_GENERATED_INCLUDE_DIR}/tessera/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera COMPONENT tessera_sdk)

install(TARGETS tessera tessera_static tessera_plugin_abi
  EXPORT tesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tessera_sdk
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tessera_sdk
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tessera_sdk)

if(TARGET tessera_cli)
  # Find libtessera next to the installed binary, wherever the prefix is
  # (also when bindir and libdir are not siblings, as in the wheel).
  file(RELATIVE_PATH tessera_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
  set_property(TARGET tessera_cli APPEND PROPERTY INSTALL_RPATH "$ORIGIN/${tessera_bin_to_lib}")
  install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tessera_sdk)
endif()

install(EXPORT tesseraTargets
  NAMESPACE tessera::
  FILE tesseraTargets.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKEDIR} COMPONENT tessera_sdk)

# The installed config lives apart from the build tree's, so that neither
# is found where the other is meant.
set(tessera_install_cfg ${CMAKE_CURRENT_BINARY_DIR}/cmake/install)
set(TESSERA_CONFIG_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
set(TESSERA_CONFIG_PLUGINDIR ${TESSERA_INSTALL_PLUGINDIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/tesseraConfig.cmake.in
  ${tessera_install_cfg}/tesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_INSTALL_CMAKEDIR}
  PATH_VARS TESSERA_CONFIG_INCLUDEDIR TESSERA_CONFIG_PLUGINDIR)
# 0.x: a new minor version may break the API, so only the same minor matches.
write_basic_package_version_file(
  ${tessera_install_cfg}/tesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${tessera_install_cfg}/tesseraConfig.cmake
  ${tessera_install_cfg}/tesseraConfigVersion.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKEDIR} COMPONENT tessera_sdk)

# The build tree's package: find_package(tessera) with
# CMAKE_PREFIX_PATH=<build> finds <build>/lib/cmake/tessera. Its targets are
# the build's own (export()), with the headers of the sources and of the
# build (version.h): the first one of TESSERA_INCLUDE_DIR is the sources'.
set(TESSERA_BUILD_CMAKEDIR ${CMAKE_BINARY_DIR}/lib/cmake/tessera)
export(EXPORT tesseraTargets NAMESPACE tessera::
  FILE ${TESSERA_BUILD_CMAKEDIR}/tesseraTargets.cmake)
set(TESSERA_CONFIG_INCLUDEDIR ${PROJECT_SOURCE_DIR}/include)
set(TESSERA_CONFIG_PLUGINDIR ${TESSERA_PLUGIN_DIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/tesseraConfig.cmake.in
  ${TESSERA_BUILD_CMAKEDIR}/tesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_BUILD_CMAKEDIR}
  INSTALL_PREFIX ${CMAKE_BINARY_DIR}
  PATH_VARS TESSERA_CONFIG_INCLUDEDIR TESSERA_CONFIG_PLUGINDIR)
write_basic_package_version_file(
  ${TESSERA_BUILD_CMAKEDIR}/tesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)

# Private dependencies of libtessera.a, for `pkg-config --static`. A new
# dependency of the library must be added here and in tesseraConfig.cmake.in.
set(TESSERA_PC_REQUIRES_PRIVATE "jansson libffi liburing liblz4 libxxhash expat")
set(TESSERA_PC_LIBS_PRIVATE "-lsundials_cvodes -lsundials_nvecserial -ldl -lpthread -lrt -lm")

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
set(TESSERA_PC_CFLAGS "-I\${includedir}")
set(TESSERA_PC_PLUGINDIR "\${libdir}/tessera/plugins")
foreach(pc tessera tessera-plugin)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${tessera_install_cfg}/${pc}.pc @ONLY)
  install(FILES ${tessera_install_cfg}/${pc}.pc DESTINATION ${TESSERA_PC_DIR} COMPONENT tessera_sdk)
endforeach()

# The build tree's: PKG_CONFIG_PATH=<build>/lib/pkgconfig. Absolute paths,
# as a build tree is used where it was built.
set(TESSERA_PC_PREFIX ${CMAKE_BINARY_DIR})
set(TESSERA_PC_LIBDIR ${CMAKE_LIBRARY_OUTPUT_DIRECTORY})
set(TESSERA_PC_INCLUDEDIR ${PROJECT_SOURCE_DIR}/include)
set(TESSERA_PC_CFLAGS "-I\${includedir} -I${TESSERA_GENERATED_INCLUDE_DIR}")
set(TESSERA_PC_PLUGINDIR ${TESSERA_PLUGIN_DIR})
foreach(pc tessera tessera-plugin)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${CMAKE_BINARY_DIR}/lib/pkgconfig/${pc}.pc @ONLY)
endforeach()
