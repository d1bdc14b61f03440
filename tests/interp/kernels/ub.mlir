// ub.mlir: one witness kernel per kind of undefined behaviour the interpreter refuses as interp.ub.
// Each takes a 16-element i32 buffer %p and a scalar %v.
cuda_tile.module @ub {
  // a pointer one past the end of the buffer
  entry @oob_ptr(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c16 = constant <i32: 16> : tile<i32>
    %q = offset %p, %c16 : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %x, %t = load_ptr_tko weak %q : tile<ptr<i32>> -> tile<i32>, token
  }
  // a view index outside the index space (two tiles of 8, index 2)
  entry @oob_view(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c2 = constant <i32: 2> : tile<i32>
    %tv = make_tensor_view %p, shape = [16], strides = [1] : tensor_view<16xi32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(8), tensor_view<16xi32, strides=[1]>>
    %x, %t = load_view_tko weak %pv[%c2] : partition_view<tile=(8), tensor_view<16xi32, strides=[1]>>, tile<i32> -> tile<8xi32>, token
  }
  // a view whose shape overruns the allocation (32 elements over a 16-element buffer)
  entry @oob_view_alloc(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c1 = constant <i32: 1> : tile<i32>
    %tv = make_tensor_view %p, shape = [32], strides = [1] : tensor_view<32xi32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(16), tensor_view<32xi32, strides=[1]>>
    %x, %t = load_view_tko weak %pv[%c1] : partition_view<tile=(16), tensor_view<32xi32, strides=[1]>>, tile<i32> -> tile<16xi32>, token
  }
  // the undefined lanes of a partial tile (no padding) stored where they are in bounds
  entry @undef_lane(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %ta = make_tensor_view %p, shape = [10], strides = [1] : tensor_view<10xi32, strides=[1]>
    %pa = make_partition_view %ta : partition_view<tile=(16), tensor_view<10xi32, strides=[1]>>
    %tb = make_tensor_view %p, shape = [16], strides = [1] : tensor_view<16xi32, strides=[1]>
    %pb = make_partition_view %tb : partition_view<tile=(16), tensor_view<16xi32, strides=[1]>>
    %x, %t = load_view_tko weak %pa[%c0] : partition_view<tile=(16), tensor_view<10xi32, strides=[1]>>, tile<i32> -> tile<16xi32>, token
    %one = constant <i32: 1> : tile<16xi32>
    %y = addi %x, %one : tile<16xi32>
    %t2 = store_view_tko weak %y, %pb[%c0] : tile<16xi32>, partition_view<tile=(16), tensor_view<16xi32, strides=[1]>>, tile<i32> -> token
  }
  // a false assume
  entry @false_assume(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %w = assume bounded<0, 10>, %v : tile<i32>
    %t = store_ptr_tko weak %p, %w : tile<ptr<i32>>, tile<i32> -> token
  }
  // integer division by zero
  entry @div_zero(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %q = divi %v, %c0 signed : tile<i32>
  }
  // remainder by zero
  entry @rem_zero(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %q = remi %v, %c0 unsigned : tile<i32>
  }
  // INT_MIN / -1
  entry @div_overflow(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %m = constant <i32: -2147483648> : tile<i32>
    %n1 = constant <i32: -1> : tile<i32>
    %q = divi %m, %n1 signed rounding<negative_inf> : tile<i32>
  }
  // ftoi of NaN, used by a store
  entry @ftoi_nan(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %nan = constant <f32: 0x7FC00000> : tile<f32>
    %i = ftoi %nan signed : tile<f32> -> tile<i32>
    %t = store_ptr_tko weak %p, %i : tile<ptr<i32>>, tile<i32> -> token
  }
  // ftoi out of range (3e9 into i32), used by a store
  entry @ftoi_range(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %big = constant <f32: 3.0e9> : tile<f32>
    %i = ftoi %big signed : tile<f32> -> tile<i32>
    %t = store_ptr_tko weak %p, %i : tile<ptr<i32>>, tile<i32> -> token
  }
  // a broken no_signed_wrap promise
  entry @nsw(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %m = constant <i32: 2147483647> : tile<i32>
    %s = addi %m, %v overflow<no_signed_wrap> : tile<i32>
  }
  // a broken no_unsigned_wrap promise in trunci
  entry @nuw_trunc(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %x = trunci %v overflow<no_unsigned_wrap> : tile<i32> -> tile<i8>
  }
  // a misaligned pointer (one byte past an i32)
  entry @misaligned(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %a = ptr_to_int %p : tile<ptr<i32>> -> tile<i64>
    %one = constant <i64: 1> : tile<i64>
    %b = addi %a, %one : tile<i64>
    %q = int_to_ptr %b : tile<i64> -> tile<ptr<i32>>
    %x, %t = load_ptr_tko weak %q : tile<ptr<i32>> -> tile<i32>, token
  }
  // a loop that never ends (refused at the step limit)
  entry @forever(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c1 = constant <i32: 1> : tile<i32>
    %r = loop iter_values(%k = %c1) : tile<i32> -> tile<i32> {
      %k2 = addi %k, %c1 : tile<i32>
      continue %k2 : tile<i32>
    }
  }
  // a for with step 0
  entry @step_zero(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c4 = constant <i32: 4> : tile<i32>
    for %i in (%c0 to %c4, step %c0) : tile<i32> {
    }
  }
  // extract of a slice out of range
  entry @extract_oob(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %t = iota : tile<16xi32>
    %s = extract %t[%v] : tile<16xi32> -> tile<4xi32>
  }
  // a shift by the bit width (unspecified by the dialect: refused)
  entry @shift_wide(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c32 = constant <i32: 32> : tile<i32>
    %s = shli %v, %c32 : tile<i32>
  }
  // a tensor_view with a dynamic shape of 0
  entry @view_shape_zero(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %tv = make_tensor_view %p, shape = [%v], strides = [1] : tile<i32> -> tensor_view<?xi32, strides=[1]>
  }
  // a broken inbounds promise (13.4): the tile of 16 over 10 elements is partial
  entry @inbounds(%p: tile<ptr<i32>>, %v: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tv = make_tensor_view %p, shape = [10], strides = [1] : tensor_view<10xi32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(16), tensor_view<10xi32, strides=[1]>>
    %x, %t = load_view_tko weak %pv[%c0] inbounds=[true] : partition_view<tile=(16), tensor_view<10xi32, strides=[1]>>, tile<i32> -> tile<16xi32>, token
  }
}
