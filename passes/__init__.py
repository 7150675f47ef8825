"""Schedule rewrites (passes/schedule) and lowering stages (passes/lowering) of the tir dialect."""
