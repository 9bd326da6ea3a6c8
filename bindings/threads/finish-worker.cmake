# Run after the threaded module's link (bindings/CMakeLists.txt, cmake -P): the emitted pool worker script SRC
# (<name>.worker.js) becomes DST (<name>.worker.cjs: in this "type": "module" package Node would read a .js as
# ESM, TOOLCHAIN.md 16) with EPILOGUE (worker-preload.js) appended. That epilogue: a pool worker that
# bindings/js/loader.js starts early (startPoolWorkers: in a browser, while the module's glue and wasm are still
# being fetched and compiled) finds the glue's URL in its own URL's fragment (#glue=<URL>) and starts importing it
# at once; the glue's 'load' command later imports the same URL and finds it in the worker's module map instead of
# fetching and compiling it only then. Without the fragment, or under Node (whose shim gives `location` no hash),
# nothing changes: the 'load' command imports the glue and reports a failure, as before. Appending needs no
# pattern from the generated text; a missing input fails the build.
foreach(var SRC DST EPILOGUE)
  if(NOT DEFINED ${var} OR NOT ${var})
    message(FATAL_ERROR "finish-worker.cmake: -D${var}=... is required")
  endif()
endforeach()
foreach(file "${SRC}" "${EPILOGUE}")
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "finish-worker.cmake: ${file} does not exist")
  endif()
endforeach()
file(READ "${SRC}" body)
file(READ "${EPILOGUE}" tail)
file(WRITE "${DST}" "${body}\n${tail}")
file(REMOVE "${SRC}")
