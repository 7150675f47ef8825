// Generated from the schedule primitives (tir_mlir/schedule/mlir_script.py): a trace
// as an MLIR script. Handles are typed SSA values; arguments are attributes, where
// #tir_schedule.operand stands for the next operand and #tir_schedule.none for None.
irdl.dialect @tir_schedule {
  irdl.type @handle
  irdl.attribute @operand
  irdl.attribute @none
  irdl.operation @add_unit_loop {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @annotate {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @annotate_buffer_access {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @bind {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @blockize {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @cache_index {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @cache_inplace {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @cache_read {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @cache_write {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @compute_at {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @compute_inline {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @compute_root {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @decompose_padding {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @decompose_reduction {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @enter_postproc {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @fuse {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @get_block {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @get_child_blocks {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @get_consumers {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @get_loops {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @get_output_blocks {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @get_producers {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @loop_partition {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @merge {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @pad_einsum {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @parallel {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @prefetch {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @read_at {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @reindex {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @reindex_cache_read {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @reindex_cache_write {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @reorder {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @reorder_block_iter_var {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @reverse_compute_at {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @reverse_compute_inline {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @rfactor {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @rolling_buffer {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @sample_categorical {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @sample_compute_location {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @sample_partitioned_tile {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @sample_perfect_tile {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @set_axis_separator {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @set_scope {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @set_store_predicate {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @split {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @storage_align {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @tensorize {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @tile {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @transform_block_layout {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @transform_layout {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @unannotate {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @unroll {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @unsafe_hide_buffer_access {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @unsafe_set_dtype {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @vectorize {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
  irdl.operation @write_at {
    %h = irdl.base @tir_schedule::@handle
    irdl.operands(handles: variadic %h)
    irdl.results(outputs: variadic %h)
  }
}
