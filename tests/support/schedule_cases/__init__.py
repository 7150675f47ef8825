"""Programs and schedules of the schedule primitives, one module per primitive: the primitive's
own tests (tests/schedule/test_schedule_<primitive>.py) run them, and the trace tests (TVM's JSON
and printed trace forms, the MLIR script) replay them."""
