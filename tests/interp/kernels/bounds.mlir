// bounds.mlir: bounds mode's witnesses: the approximate instructions (exp2 lowered to ex2.approx with flush_to_zero, divf rounding<approx>, rsqrt approx), interp.undecided from a comparison and from ftoi of an approximate value, and mmaf with and without fast_acc.
cuda_tile.module @bd {
  entry @approx(%x: tile<ptr<f32>>, %y: tile<ptr<f32>>, %e: tile<ptr<f32>>, %q: tile<ptr<f32>>, %r: tile<ptr<f32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tx = make_tensor_view %x, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %px = make_partition_view %tx : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %ty = make_tensor_view %y, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %py = make_partition_view %ty : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %te = make_tensor_view %e, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pe = make_partition_view %te : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tq = make_tensor_view %q, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pq = make_partition_view %tq : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tr = make_tensor_view %r, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pr = make_partition_view %tr : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %vx, %t0 = load_view_tko weak %px[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %vy, %t1 = load_view_tko weak %py[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %ve = exp2 %vx flush_to_zero : tile<16xf32>
    %vq = divf %vx, %vy rounding<approx> : tile<16xf32>
    %vr = rsqrt %vy rounding<approx> : tile<16xf32>
    %t2 = store_view_tko weak %ve, %pe[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
    %t3 = store_view_tko weak %vq, %pq[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
    %t4 = store_view_tko weak %vr, %pr[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
    return
  }
  // exp2(x) >= 1 decides a branch: undecided at x = 0 (ex2.approx may give just below 1), decided elsewhere
  entry @branch(%x: tile<ptr<f32>>, %o: tile<ptr<i32>>) {
    %v, %t = load_ptr_tko weak %x : tile<ptr<f32>> -> tile<f32>, token
    %e = exp2 %v : tile<f32>
    %one = constant <f32: 1.0> : tile<f32>
    %ge = cmpf greater_than_or_equal ordered %e, %one : tile<f32> -> tile<i1>
    %c1 = constant <i32: 1> : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %s = select %ge, %c1, %c0 : tile<i1>, tile<i32>
    %t2 = store_ptr_tko weak %o, %s : tile<ptr<i32>>, tile<i32> -> token
    return
  }
  // an index computed from an approximate value: ftoi(exp2(x)) is 0 or 1 at x = 0
  entry @index(%x: tile<ptr<f32>>, %o: tile<ptr<i32>>) {
    %v, %t = load_ptr_tko weak %x : tile<ptr<f32>> -> tile<f32>, token
    %e = exp2 %v : tile<f32>
    %i = ftoi %e signed : tile<f32> -> tile<i32>
    %t2 = store_ptr_tko weak %o, %i : tile<ptr<i32>>, tile<i32> -> token
    return
  }
  // fp8 products with fast_acc (Hopper's reduced accumulation: the hopper-fp8 model in bounds mode) and without
  entry @fastacc(%a: tile<ptr<f8E4M3FN>>, %b: tile<ptr<f8E4M3FN>>, %c: tile<ptr<f32>>, %d: tile<ptr<f32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %ta = make_tensor_view %a, shape = [16, 64], strides = [64, 1] : tensor_view<16x64xf8E4M3FN, strides=[64,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x64), tensor_view<16x64xf8E4M3FN, strides=[64,1]>>
    %tb = make_tensor_view %b, shape = [64, 16], strides = [16, 1] : tensor_view<64x16xf8E4M3FN, strides=[16,1]>
    %pb = make_partition_view %tb : partition_view<tile=(64x16), tensor_view<64x16xf8E4M3FN, strides=[16,1]>>
    %tc = make_tensor_view %c, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf32, strides=[16,1]>
    %pc = make_partition_view %tc : partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>
    %td = make_tensor_view %d, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf32, strides=[16,1]>
    %pd = make_partition_view %td : partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>
    %x, %t0 = load_view_tko weak %pa[%c0, %c0] : partition_view<tile=(16x64), tensor_view<16x64xf8E4M3FN, strides=[64,1]>>, tile<i32> -> tile<16x64xf8E4M3FN>, token
    %y, %t1 = load_view_tko weak %pb[%c0, %c0] : partition_view<tile=(64x16), tensor_view<64x16xf8E4M3FN, strides=[16,1]>>, tile<i32> -> tile<64x16xf8E4M3FN>, token
    %z = constant <f32: 0.0> : tile<16x16xf32>
    %r1 = mmaf %x, %y, %z fast_acc : tile<16x64xf8E4M3FN>, tile<64x16xf8E4M3FN>, tile<16x16xf32>
    %r2 = mmaf %x, %y, %z : tile<16x64xf8E4M3FN>, tile<64x16xf8E4M3FN>, tile<16x16xf32>
    %t2 = store_view_tko weak %r1, %pc[%c0, %c0] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> token
    %t3 = store_view_tko weak %r2, %pd[%c0, %c0] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> token
    return
  }
}
