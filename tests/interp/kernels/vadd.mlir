// vadd.mlir: c = a + b in f32 through 1-d views of 16-element tiles; a partial last tile (no padding) flows through addf and is dropped by the masked store.
cuda_tile.module @m {
  entry @vadd(%a: tile<ptr<f32>>, %b: tile<ptr<f32>>, %c: tile<ptr<f32>>, %n: tile<i32>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %ta = make_tensor_view %a, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %tb = make_tensor_view %b, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %tc = make_tensor_view %c, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pa = make_partition_view %ta : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>
    %pb = make_partition_view %tb : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>
    %pc = make_partition_view %tc : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>
    %x, %t0 = load_view_tko weak %pa[%bx] : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %y, %t1 = load_view_tko weak %pb[%bx] : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %z = addf %x, %y : tile<16xf32>
    %t2 = store_view_tko weak %z, %pc[%bx] : tile<16xf32>, partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
