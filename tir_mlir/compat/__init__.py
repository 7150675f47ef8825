"""TVM 0.21 names a ported script reaches through `import tir_mlir as tvm`: `tvm.tir`,
`tvm.nd`, `tvm.cpu()`. Each is a thin alias of tir_mlir's own API."""
