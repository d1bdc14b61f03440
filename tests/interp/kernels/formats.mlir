// formats.mlir: the formats of exactref's table beyond the dialect's as tile elements (f6, FNUZ fp8),
// and decimal constants rounded to nearest even into fp8 (cutile-rs issue 250 truncated them).
cuda_tile.module @formats {
  entry @narrow(%x: tile<ptr<f32>>, %a: tile<ptr<f6E2M3FN>>, %b: tile<ptr<f8E4M3FNUZ>>, %c: tile<ptr<f8E4M3FN>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tx = make_tensor_view %x, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %px = make_partition_view %tx : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %ta = make_tensor_view %a, shape = [16], strides = [1] : tensor_view<16xf6E2M3FN, strides=[1]>
    %pa = make_partition_view %ta : partition_view<tile=(16), tensor_view<16xf6E2M3FN, strides=[1]>>
    %tb = make_tensor_view %b, shape = [16], strides = [1] : tensor_view<16xf8E4M3FNUZ, strides=[1]>
    %pb = make_partition_view %tb : partition_view<tile=(16), tensor_view<16xf8E4M3FNUZ, strides=[1]>>
    %tc = make_tensor_view %c, shape = [4], strides = [1] : tensor_view<4xf8E4M3FN, strides=[1]>
    %pc = make_partition_view %tc : partition_view<tile=(4), tensor_view<4xf8E4M3FN, strides=[1]>>
    %v, %t0 = load_view_tko weak %px[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %v6 = ftof %v : tile<16xf32> -> tile<16xf6E2M3FN>
    %v8 = ftof %v : tile<16xf32> -> tile<16xf8E4M3FNUZ>
    %t1 = store_view_tko weak %v6, %pa[%c0] : tile<16xf6E2M3FN>, partition_view<tile=(16), tensor_view<16xf6E2M3FN, strides=[1]>>, tile<i32> -> token
    %t2 = store_view_tko weak %v8, %pb[%c0] : tile<16xf8E4M3FNUZ>, partition_view<tile=(16), tensor_view<16xf8E4M3FNUZ, strides=[1]>>, tile<i32> -> token
    %k = constant <f8E4M3FN: [1.1, 1.0625, -0.3, 300.0]> : tile<4xf8E4M3FN>
    %t3 = store_view_tko weak %k, %pc[%c0] : tile<4xf8E4M3FN>, partition_view<tile=(4), tensor_view<4xf8E4M3FN, strides=[1]>>, tile<i32> -> token
  }
}
