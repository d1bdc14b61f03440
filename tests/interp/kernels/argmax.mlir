// argmax.mlir: a variadic reduce (values and their indices together: the first maximum wins) and an
// exclusive-style use of a reverse scan of maxima, through 0-d and 1-d stores.
cuda_tile.module @am {
  entry @argmax(%x: tile<ptr<f32>>, %vmax: tile<ptr<f32>>, %imax: tile<ptr<i32>>, %suf: tile<ptr<f32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tx = make_tensor_view %x, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %px = make_partition_view %tx : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %v, %t0 = load_view_tko weak %px[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %ix = iota : tile<16xi32>
    %m, %i = reduce %v, %ix dim=0 identities=[0xFF800000 : f32, 0 : i32] : tile<16xf32>, tile<16xi32> -> tile<f32>, tile<i32>
    (%ve: tile<f32>, %va: tile<f32>, %ie: tile<i32>, %ia: tile<i32>) {
      %gt = cmpf greater_than ordered %ve, %va : tile<f32> -> tile<i1>
      %nm = select %gt, %ve, %va : tile<i1>, tile<f32>
      %ni = select %gt, %ie, %ia : tile<i1>, tile<i32>
      yield %nm, %ni : tile<f32>, tile<i32>
    }
    %t1 = store_ptr_tko weak %vmax, %m : tile<ptr<f32>>, tile<f32> -> token
    %t2 = store_ptr_tko weak %imax, %i : tile<ptr<i32>>, tile<i32> -> token
    %s = scan %v dim=0 reverse=true identities=[0xFF800000 : f32] : tile<16xf32> -> tile<16xf32>
    (%e: tile<f32>, %a: tile<f32>) {
      %mx = maxf %e, %a : tile<f32>
      yield %mx : tile<f32>
    }
    %ts = make_tensor_view %suf, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %ps = make_partition_view %ts : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %t3 = store_view_tko weak %s, %ps[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
  }
}
