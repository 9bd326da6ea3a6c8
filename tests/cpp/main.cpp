// Catch2 v2 main, in its own translation unit (compiled once; TOOLCHAIN.md 5).
#define CATCH_CONFIG_MAIN
#include <catch.hpp>
