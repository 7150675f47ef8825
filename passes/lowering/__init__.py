"""Lowering stages, tir -> affine -> scf -> llvm (and gpu) dialects; pipeline.py lists them
per target."""
