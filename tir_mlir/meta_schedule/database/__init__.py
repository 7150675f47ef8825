"""Databases of tuning records (TVM's `ms.database`): in memory, TVM's JSON files, SQLite,
unions of databases, and `PyDatabase` for a user's own."""

from tir_mlir.meta_schedule.database.database import Database
from tir_mlir.meta_schedule.database.json_database import JSONDatabase
from tir_mlir.meta_schedule.database.memory_database import MemoryDatabase
from tir_mlir.meta_schedule.database.py_database import PyDatabase
from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.meta_schedule.database.sqlite_database import SQLiteDatabase
from tir_mlir.meta_schedule.database.union_database import OrderedUnionDatabase, UnionDatabase
from tir_mlir.meta_schedule.database.workload import Workload

__all__ = [
    "Database",
    "JSONDatabase",
    "MemoryDatabase",
    "OrderedUnionDatabase",
    "PyDatabase",
    "SQLiteDatabase",
    "TuningRecord",
    "UnionDatabase",
    "Workload",
]
