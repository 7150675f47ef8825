"""Helpers over the `tir` dialect's IR shared by every layer above it: walks, affine-expression
queries, index dtypes, read/write regions, well-formedness, structural equality.

Nothing here imports the frontend, the printer, a schedule rewrite, the lowering, the runtime
or the tuner.
"""
