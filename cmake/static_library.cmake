# SPDX-License-Identifier: MIT
# libtessera.a, exporting what libtessera.so exports and nothing more.
# A plain archive of the library's objects would leave every internal
# function global (arena_alloc, find_field, ...), and a host defining the
# same name beside libtessera.a would fail to link. So the objects are
# linked into one relocatable object (-r), in which their references to
# each other are bound, and every hidden symbol (all but TSR_API, as the
# objects are compiled with -fvisibility=hidden) is then made local.
# Programs of this tree that call internal functions (tessera-worker, the
# fuzz targets) link tessera_internal instead: the same objects, as they are.
if(NOT CMAKE_OBJCOPY)
  find_program(CMAKE_OBJCOPY NAMES objcopy llvm-objcopy)
endif()
if(NOT CMAKE_OBJCOPY)
  message(FATAL_ERROR "objcopy is needed to build libtessera.a (binutils)")
endif()

set(tessera_static_dir ${CMAKE_CURRENT_BINARY_DIR}/tessera_static)
file(MAKE_DIRECTORY ${tessera_static_dir})
add_custom_command(
  OUTPUT ${tessera_static_dir}/tessera.o
  BYPRODUCTS ${tessera_static_dir}/tessera_all.o
  COMMAND ${CMAKE_C_COMPILER} -r -nostdlib -o ${tessera_static_dir}/tessera_all.o
    $<TARGET_OBJECTS:tessera_objects>
  COMMAND ${CMAKE_OBJCOPY} --localize-hidden ${tessera_static_dir}/tessera_all.o
    ${tessera_static_dir}/tessera.o
  DEPENDS tessera_objects $<TARGET_OBJECTS:tessera_objects>
  COMMAND_EXPAND_LISTS VERBATIM
  COMMENT "Linking the objects of libtessera.a into one, internal names made local")
add_library(tessera_static STATIC ${tessera_static_dir}/tessera.o)
set_target_properties(tessera_static PROPERTIES LINKER_LANGUAGE C)

# The library's objects as they are, internal names global: for this tree's
# own programs and tests only (neither installed nor exported).
add_library(tessera_internal STATIC $<TARGET_OBJECTS:tessera_objects>)
target_include_directories(tessera_internal PUBLIC ${PROJECT_SOURCE_DIR})
