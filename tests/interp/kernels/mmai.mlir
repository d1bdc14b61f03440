// mmai.mlir: an int8 GEMM: C (16x16 i32) += A (16x32 i8, signed) B (32x16 i8, read unsigned), wrapping.
cuda_tile.module @mi {
  entry @mmai(%A: tile<ptr<i8>>, %B: tile<ptr<i8>>, %C: tile<ptr<i32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %ta = make_tensor_view %A, shape = [16, 32], strides = [32, 1] : tensor_view<16x32xi8, strides=[32,1]>
    %tb = make_tensor_view %B, shape = [32, 16], strides = [16, 1] : tensor_view<32x16xi8, strides=[16,1]>
    %tc = make_tensor_view %C, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xi32, strides=[16,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x32), tensor_view<16x32xi8, strides=[32,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x16), tensor_view<32x16xi8, strides=[16,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(16x16), tensor_view<16x16xi32, strides=[16,1]>>
    %a, %t0 = load_view_tko weak %pa[%c0, %c0] : partition_view<tile=(16x32), tensor_view<16x32xi8, strides=[32,1]>>, tile<i32> -> tile<16x32xi8>, token
    %b, %t1 = load_view_tko weak %pb[%c0, %c0] : partition_view<tile=(32x16), tensor_view<32x16xi8, strides=[16,1]>>, tile<i32> -> tile<32x16xi8>, token
    %c, %t2 = load_view_tko weak %pc[%c0, %c0] : partition_view<tile=(16x16), tensor_view<16x16xi32, strides=[16,1]>>, tile<i32> -> tile<16x16xi32>, token
    %d = mmai %a, %b, %c signed unsigned : tile<16x32xi8>, tile<32x16xi8>, tile<16x16xi32>
    %t3 = store_view_tko weak %d, %pc[%c0, %c0] : tile<16x16xi32>, partition_view<tile=(16x16), tensor_view<16x16xi32, strides=[16,1]>>, tile<i32> -> token
  }
}
