"""Meta schedule: automatic tuning (TVM's `tvm.meta_schedule`)."""
from tir_mlir.meta_schedule import arg_info, builder, database, runner

__all__ = ["arg_info", "builder", "database", "runner"]
