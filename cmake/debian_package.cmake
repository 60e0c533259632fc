# Two Debian packages from the install components (cmake/install.cmake):
#   hearth      the library, the `hearth` command and the examples
#   hearth-dev  headers, CMake package, pkg-config file; depends on hearth
# The dependencies are written out rather than computed by dpkg-shlibdeps,
# which cannot map OpenBLAS (installed through alternatives) to its package;
# scripts/check_debian_package.sh checks that every library the installed
# files need comes from a declared package. A build with oneDNN adds the
# package that owns it, and a CUDA build the packages that own its CUDA
# libraries (NVIDIA's, whose names vary by release), when dpkg knows them; a
# library installed otherwise (built from source, NVIDIA's runfile, Python
# wheels) belongs to no package, and HEARTH_DEB_EXTRA_DEPENDS may name what
# provides it instead.
set(HEARTH_DEB_EXTRA_DEPENDS "" CACHE STRING "More Depends for the hearth .deb (oneDNN or the CUDA libraries, where no package owns them)")

set(_runtime_depends libc6 libstdc++6 libgcc-s1 libgomp1 libopenblas0 zlib1g libjpeg62-turbo libpng16-16 libutf8proc2 libpcre2-8-0)
if(HEARTH_GLOO_ENABLED)
  list(APPEND _runtime_depends libgloo0)
endif()
# The optional libraries this build links, each declared by the package dpkg
# says owns it: oneDNN (Debian 12's libdnnl2; the name changes with its ABI),
# and a CUDA build's cuBLASLt, cuDNN and NCCL.
set(_owned_libraries "")
if(HEARTH_ONEDNN_ENABLED)
  list(APPEND _owned_libraries ${DNNL_LIBRARY})
endif()
if(HEARTH_CUDA_ENABLED)
  get_target_property(_cublaslt CUDA::cublasLt IMPORTED_LOCATION)
  list(APPEND _owned_libraries ${_cublaslt} ${CUDNN_LIBRARY} ${NCCL_LIBRARY})
endif()
find_program(_dpkg dpkg)
foreach(_lib ${_owned_libraries})
  if(NOT EXISTS "${_lib}")
    continue()
  endif()
  file(REAL_PATH ${_lib} _real)
  if(_dpkg)
    execute_process(COMMAND ${_dpkg} -S ${_real} OUTPUT_VARIABLE _owner ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REGEX REPLACE "[:,].*" "" _owner "${_owner}")
  endif()
  if(_owner)
    list(APPEND _runtime_depends ${_owner})
  else()
    message(STATUS "hearth: ${_real} belongs to no Debian package: the .deb cannot declare it (HEARTH_DEB_EXTRA_DEPENDS)")
  endif()
  unset(_owner)
endforeach()
list(REMOVE_DUPLICATES _runtime_depends)
if(HEARTH_DEB_EXTRA_DEPENDS)
  list(APPEND _runtime_depends ${HEARTH_DEB_EXTRA_DEPENDS})
endif()
string(REPLACE ";" ", " _runtime_depends "${_runtime_depends}")

set(CPACK_PACKAGE_NAME hearth)
set(CPACK_PACKAGE_VENDOR "hearth")
set(CPACK_PACKAGE_CONTACT "hearth maintainers <hearth@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Deep-learning training library: tensors, autograd, CPU and CUDA backends")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME hearth)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${_runtime_depends}")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME hearth-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "hearth (= ${PROJECT_VERSION}), nlohmann-json3-dev")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "the hearth library, the hearth command and the example programs")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION "headers, CMake package and pkg-config file for building against hearth")
include(CPack)
