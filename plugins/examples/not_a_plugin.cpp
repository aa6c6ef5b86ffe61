// A shared library with no harness entry point: `--plugin` must refuse it.
extern "C" int some_unrelated_function() { return 42; }
