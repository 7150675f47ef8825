"""Databases of tuning records (TVM's `ms.database`): in memory, TVM's JSON files, SQLite."""
from tir_mlir.meta_schedule.database.database import Database
from tir_mlir.meta_schedule.database.json_database import JSONDatabase
from tir_mlir.meta_schedule.database.memory_database import MemoryDatabase
from tir_mlir.meta_schedule.database.record import TuningRecord
from tir_mlir.meta_schedule.database.sqlite_database import SQLiteDatabase
from tir_mlir.meta_schedule.database.workload import Workload

__all__ = ["Database", "JSONDatabase", "MemoryDatabase", "SQLiteDatabase", "TuningRecord",
           "Workload"]
