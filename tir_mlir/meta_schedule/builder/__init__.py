"""Builders compile candidate programs into loadable artifacts (TVM's `ms.builder`)."""

from tir_mlir.meta_schedule.builder.builder import Builder, BuilderInput, BuilderResult
from tir_mlir.meta_schedule.builder.local_builder import LocalBuilder

__all__ = ["Builder", "BuilderInput", "BuilderResult", "LocalBuilder"]
