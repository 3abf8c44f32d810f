# Install rules and the exported CMake package `Dist` (semantics §7):
#
#   find_package(Dist CONFIG)   P/lib/cmake/Dist/DistConfig.cmake
#     Dist::Planner    the MLIR-free planner and its C API (dist-c/Planner.h)
#     Dist::Runtime    libdist_runtime.so, the C ABI over MPI (and NCCL)
#     Dist::MLIRDist   the dialect, passes, conversions and dist/InitAllDist.h
#
# Everything is installed relative to the prefix: the export files locate
# themselves, so the tree can be moved or packaged.

include(CMakePackageConfigHelpers)

# What an exported target's users need to compile against it, in the build
# tree (a parent project's add_subdirectory) and once installed.
function(dist_export_includes target)
  cmake_parse_arguments(ARG "GENERATED" "" "" ${ARGN})
  target_include_directories(${target} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${DIST_INSTALL_INCLUDEDIR}>)
  if(ARG_GENERATED)
    target_include_directories(${target} SYSTEM INTERFACE
      $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
  endif()
endfunction()

set(DIST_EXPORTED_TARGETS DistPlanner DistCAPIPlanner)
set_target_properties(DistPlanner PROPERTIES EXPORT_NAME PlannerCore)
set_target_properties(DistCAPIPlanner PROPERTIES EXPORT_NAME Planner)
dist_export_includes(DistPlanner)
dist_export_includes(DistCAPIPlanner)
# The planner's C++ headers use LLVM's ADT and Support (the C API's do not).
foreach(dir ${LLVM_INCLUDE_DIRS})
  target_include_directories(DistPlanner SYSTEM INTERFACE $<BUILD_INTERFACE:${dir}>)
endforeach()
add_library(Dist::Planner ALIAS DistCAPIPlanner)

if(TARGET DistRuntime)
  list(APPEND DIST_EXPORTED_TARGETS DistRuntime)
  set_target_properties(DistRuntime PROPERTIES EXPORT_NAME Runtime)
  dist_export_includes(DistRuntime)
  add_library(Dist::Runtime ALIAS DistRuntime)
endif()

if(TARGET DistRegistration)
  # One name for the whole MLIR layer; the libraries it stands for are
  # exported too (static libraries need their dependencies at link time).
  add_library(DistMLIR INTERFACE)
  target_link_libraries(DistMLIR INTERFACE DistRegistration DistConversion DistCodegen DistTransforms DistInterfaces DistIR)
  set_target_properties(DistMLIR PROPERTIES EXPORT_NAME MLIRDist)
  # LLVM's and MLIR's headers, for a parent project that has not asked for
  # them itself (the installed package adds its own from find_dependency).
  foreach(dir ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
    target_include_directories(DistMLIR SYSTEM INTERFACE $<BUILD_INTERFACE:${dir}>)
  endforeach()
  foreach(target DistIR DistInterfaces DistTransforms DistCodegen DistConversion DistRegistration)
    dist_export_includes(${target} GENERATED)
  endforeach()
  list(APPEND DIST_EXPORTED_TARGETS DistIR DistInterfaces DistTransforms DistCodegen DistConversion DistRegistration DistMLIR)
  add_library(Dist::MLIRDist ALIAS DistMLIR)
endif()

install(TARGETS ${DIST_EXPORTED_TARGETS}
  EXPORT DistTargets
  ARCHIVE DESTINATION ${DIST_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${DIST_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${DIST_INSTALL_BINDIR})
install(EXPORT DistTargets
  NAMESPACE Dist::
  DESTINATION ${DIST_INSTALL_CMAKEDIR})

# Headers: ours, and the TableGen output the dialect's headers include. The
# runtime's only public header is its C ABI (include/dist/Runtime/
# DistRuntime.h); its C++ internals, MPI's among them, live in lib/Runtime.
# The .def tables go too: installed headers include them (Move.h reads
# MoveKinds.def).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dist ${PROJECT_SOURCE_DIR}/include/dist-c
  DESTINATION ${DIST_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
if(DIST_ENABLE_MLIR)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/include/dist
    DESTINATION ${DIST_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h.inc"
    PATTERN CMakeFiles EXCLUDE)
endif()

# Tools, and the plugin mlir-opt loads.
foreach(tool dist-opt dist-plan dist-run dist-run-worker dist-calibrate)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${DIST_INSTALL_BINDIR})
  endif()
endforeach()
if(TARGET DistRuntime)
  install(PROGRAMS ${DIST_TOOLS_DIR}/dist-mpirun DESTINATION ${DIST_INSTALL_BINDIR})
endif()
if(TARGET DistPlugin)
  install(TARGETS DistPlugin LIBRARY DESTINATION ${DIST_INSTALL_LIBDIR})
endif()

set(DIST_CONFIG_HAVE_MLIR ${DIST_ENABLE_MLIR})
set(DIST_CONFIG_HAVE_RUNTIME OFF)
if(TARGET DistRuntime)
  set(DIST_CONFIG_HAVE_RUNTIME ON)
endif()
set(DIST_LLVM_HINTS_LIST "${LLVM_DIR}")
if(DIST_ENABLE_MLIR)
  list(APPEND DIST_LLVM_HINTS_LIST "${MLIR_DIR}")
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/DistConfig.cmake.in
  ${PROJECT_BINARY_DIR}/DistPackage/DistConfig.cmake
  INSTALL_DESTINATION ${DIST_INSTALL_CMAKEDIR}
  PATH_VARS DIST_INSTALL_BINDIR DIST_INSTALL_LIBDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/DistPackage/DistConfigVersion.cmake
  VERSION 0.1.0
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/DistPackage/DistConfig.cmake
  ${PROJECT_BINARY_DIR}/DistPackage/DistConfigVersion.cmake
  DESTINATION ${DIST_INSTALL_CMAKEDIR})
