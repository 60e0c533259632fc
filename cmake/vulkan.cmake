# Decides whether the Vulkan backend (hearth/backends/vulkan/) is built
# (cmake/backends.cmake includes it). It needs, at build time only, Vulkan's
# headers, volk (which loads the Vulkan loader at run time, so neither the
# library nor its .deb depends on libvulkan) and glslc, which compiles the
# kernels' GLSL to SPIR-V that is embedded in the library. At run time a
# machine without a Vulkan loader or driver sees the kind as unavailable,
# with the reason.
set(HEARTH_VULKAN "AUTO" CACHE STRING "Build the Vulkan backend: AUTO, ON or OFF")
set_property(CACHE HEARTH_VULKAN PROPERTY STRINGS AUTO ON OFF)
set(HEARTH_VULKAN_ENABLED OFF)
set(_vulkan_missing "")
if(HEARTH_VULKAN STREQUAL "ON" OR HEARTH_VULKAN STREQUAL "AUTO")
  find_path(VULKAN_HEADERS_DIR vulkan/vulkan.h)
  find_path(VOLK_DIR volk.h)
  find_file(VOLK_SOURCE volk.c HINTS ${VOLK_DIR})
  find_program(GLSLC glslc)
  if(NOT VULKAN_HEADERS_DIR)
    list(APPEND _vulkan_missing "Vulkan's headers (libvulkan-dev)")
  endif()
  if(NOT VOLK_DIR OR NOT VOLK_SOURCE)
    list(APPEND _vulkan_missing "volk (libvulkan-volk-dev)")
  endif()
  if(NOT GLSLC)
    list(APPEND _vulkan_missing "glslc (glslc)")
  endif()
  if(NOT EXISTS ${CMAKE_SOURCE_DIR}/hearth/backends/vulkan/vulkan_runtime.cpp)
    list(APPEND _vulkan_missing "its sources (hearth/backends/vulkan/)")
  endif()
  if(_vulkan_missing)
    string(REPLACE ";" ", " _vulkan_missing "${_vulkan_missing}")
    if(HEARTH_VULKAN STREQUAL "ON")
      message(FATAL_ERROR "HEARTH_VULKAN=ON but the Vulkan backend cannot be built: missing ${_vulkan_missing}")
    endif()
  else()
    set(HEARTH_VULKAN_ENABLED ON)
  endif()
else()
  set(_vulkan_missing "nothing (turned off with -DHEARTH_VULKAN=OFF)")
endif()

if(HEARTH_VULKAN_ENABLED)
  set(HEARTH_VULKAN_STATUS "ON (loader opened at run time)")
else()
  set(HEARTH_VULKAN_STATUS "OFF (missing ${_vulkan_missing})")
  hearth_backend_not_built(vulkan "hearth was built without Vulkan (missing at configure time: ${_vulkan_missing}). Install them (scripts/install_deps.sh does) and rebuild, or configure with -DHEARTH_VULKAN=ON to make their absence an error.")
  # The backend's switches are plain C++, declared in every build so that
  # `hearth env` and the README's table list them all.
  list(APPEND HEARTH_BACKEND_SOURCES ${CMAKE_SOURCE_DIR}/hearth/backends/vulkan/vulkan_switches.cpp)
endif()

if(HEARTH_VULKAN_ENABLED)
  file(GLOB _vulkan_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/backends/vulkan/*.cpp)
  # volk's loader-opening code, compiled once into the library (C).
  list(APPEND HEARTH_BACKEND_SOURCES ${_vulkan_sources} ${VOLK_SOURCE})
  # Vulkan's structures are written `VkFooInfo info{VK_STRUCTURE_TYPE_FOO_INFO};`,
  # the rest zeroed on purpose.
  set_source_files_properties(${_vulkan_sources} PROPERTIES COMPILE_OPTIONS -Wno-missing-field-initializers)
  list(APPEND HEARTH_BACKEND_INCLUDE_DIRS ${VOLK_DIR} ${VULKAN_HEADERS_DIR})
  list(APPEND HEARTH_BACKEND_LIBS ${CMAKE_DL_LIBS})

  # The kernels: every shaders/<name>.comp is compiled by glslc to SPIR-V, and
  # the words are embedded in the library (one generated .cpp holding them
  # all, found by name at run time: hearth/backends/vulkan/shader_library.h).
  # A shader compiled more than once with different macros is listed in
  # shaders/variants.txt as `<variant name> <source stem> <MACRO[=value]>...`;
  # a source named there is compiled only as its variants. shaders/*.glsl are
  # included snippets: every shader is rebuilt when one changes.
  set(_shader_dir ${CMAKE_SOURCE_DIR}/hearth/backends/vulkan/shaders)
  set(_spv_dir ${CMAKE_BINARY_DIR}/generated/vulkan_spirv)
  file(GLOB _shader_sources CONFIGURE_DEPENDS ${_shader_dir}/*.comp)
  file(GLOB _shader_includes CONFIGURE_DEPENDS ${_shader_dir}/*.glsl)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_shader_dir}/variants.txt)
  set(_shader_jobs "")  # name|source|macros
  set(_varied_sources "")
  if(EXISTS ${_shader_dir}/variants.txt)
    file(STRINGS ${_shader_dir}/variants.txt _variant_lines REGEX "^[a-z]")
    foreach(_line IN LISTS _variant_lines)
      string(REGEX REPLACE "[ \t]+" ";" _fields "${_line}")
      list(POP_FRONT _fields _variant _stem)
      list(APPEND _varied_sources ${_stem})
      string(REPLACE ";" "," _macros "${_fields}")
      list(APPEND _shader_jobs "${_variant}|${_stem}|${_macros}")
    endforeach()
  endif()
  foreach(_source IN LISTS _shader_sources)
    get_filename_component(_stem ${_source} NAME_WE)
    if(NOT _stem IN_LIST _varied_sources)
      list(APPEND _shader_jobs "${_stem}|${_stem}|")
    endif()
  endforeach()
  set(_spv_files "")
  foreach(_job IN LISTS _shader_jobs)
    string(REPLACE "|" ";" _job "${_job}")
    list(GET _job 0 _name)
    list(GET _job 1 _stem)
    list(LENGTH _job _job_len)
    set(_defines "")
    if(_job_len GREATER 2)
      list(GET _job 2 _macros)
      string(REPLACE "," ";" _macros "${_macros}")
      foreach(_m IN LISTS _macros)
        list(APPEND _defines "-D${_m}")
      endforeach()
    endif()
    set(_spv ${_spv_dir}/${_name}.spv)
    add_custom_command(
      OUTPUT ${_spv}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_spv_dir}
      COMMAND ${GLSLC} --target-env=vulkan1.2 -O -I ${_shader_dir} ${_defines} -o ${_spv} ${_shader_dir}/${_stem}.comp
      DEPENDS ${_shader_dir}/${_stem}.comp ${_shader_includes}
      COMMENT "glslc ${_name}"
      VERBATIM)
    list(APPEND _spv_files ${_spv})
  endforeach()
  set(_embedded ${CMAKE_BINARY_DIR}/generated/hearth/backends/vulkan/embedded_shaders.cpp)
  add_custom_command(
    OUTPUT ${_embedded}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${_embedded} "-DINPUTS=${_spv_files}" -P
            ${CMAKE_SOURCE_DIR}/hearth/backends/vulkan/embed_spirv.cmake
    DEPENDS ${_spv_files} ${CMAKE_SOURCE_DIR}/hearth/backends/vulkan/embed_spirv.cmake
    COMMENT "embedding the Vulkan kernels' SPIR-V"
    VERBATIM)
  list(APPEND HEARTH_BACKEND_SOURCES ${_embedded})
endif()
