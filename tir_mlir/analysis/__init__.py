"""Analyses of `tir` programs shared by the schedule, the printer and the lowering: regions and
their cover, linear forms and index simplification, affine bindings, loop and block structure,
the schedule's op index, and the small IR edits (erase, rebind, copy an expression tree) that the
schedule rewrites and the lowering stages both use.

Nothing here imports a schedule rewrite, a lowering stage, the runtime or the tuner.
"""
