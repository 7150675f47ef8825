"""Tensor intrinsics shipped with tir_mlir, registered in `TensorIntrin` on first use."""
