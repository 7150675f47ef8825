"""The `tir-mlir tune` arguments of a quick, reproducible tuning run and its program."""

from workloads import matmul


MATMUL = matmul(32)


FAST = ["--strategy", "replay-trace", "--seed", "3", "--timeout", "60"]
