# Emscripten (3.1.6, Debian) compile and link flags shared by the module and the wasm tests.
# Why each flag: shared/TOOLCHAIN.md (section numbers in brackets).

# Core and module: no exception catching (the core reports errors as values, STYLE 4.5).
function(attnscope_wasm_compile_flags target)
  target_compile_options(${target} PRIVATE -fno-exceptions)
endfunction()

# Test executables: Catch2 needs exception catching [5]; sync compile so node runs them directly
# under CTest [3]; NODERAWFS to read tests/fixtures from disk [3]; EXIT_RUNTIME flushes output and
# returns main's status; link at -O1 to keep relinks ~1 s [4].
set(ATTNSCOPE_WASM_TEST_COMPILE -fexceptions)
set(ATTNSCOPE_WASM_TEST_LINK
    -fexceptions -O1 -sWASM_ASYNC_COMPILATION=0 -sALLOW_MEMORY_GROWTH=1 -sNODERAWFS=1 -sEXIT_RUNTIME=1
    -sENVIRONMENT=node)
