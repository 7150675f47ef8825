"""Commits batches of tuning records to a SQLite database until told to stop (or killed);
prints "<batch number>" after each committed batch. Used by the durability tests.

    python db_writer.py DB WRITER_ID BATCHES BATCH_SIZE     (BATCHES 0: forever)
"""

import sys

from tir_mlir.meta_schedule.database import SQLiteDatabase, TuningRecord, Workload
from tir_mlir.schedule.trace import Trace

TARGET = "llvm -mcpu=testcpu -num-cores=2"
TRACE = Trace.from_json(
    {
        "insts": [
            {"name": "get_block", "args": {"name": "Y", "func_name": "mm_relu"}, "outputs": "b0"},
            {"name": "get_loops", "args": {"block": {"rv": "b0"}}, "outputs": ["l1", "l2", "l3"]},
        ],
        "decisions": {},
    }
)
WORKLOAD = Workload(shash="0" * 64, mlir_text="module {}")


def main(path, writer, batches, size):
    db = SQLiteDatabase(path)
    batch = 0
    while batches == 0 or batch < batches:
        db.commit_tuning_records(
            [
                TuningRecord(
                    TRACE, WORKLOAD, [writer + batch * 1e-3 + k * 1e-6], TARGET, error_msg=None
                )
                for k in range(size)
            ]
        )
        print(batch, flush=True)
        batch += 1


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
