"""Analyses of `tir` programs shared by the schedule, the printer and the lowering.

They read the IR and never change it; nothing here imports a schedule rewrite, a lowering stage,
the runtime or the tuner.
"""
