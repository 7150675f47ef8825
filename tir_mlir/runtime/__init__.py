"""Running programs: `build` JIT-compiles a module (CPU in build.py, GPU in cuda.py) into
functions called on numpy arrays; run_program.py is `tir-mlir run`."""
