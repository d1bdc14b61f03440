// epilogue.mlir: a fused epilogue: D = relu(A B + bias) converted to f8E4M3FN; A 16x32 f16, B 32x16 f16,
// f32 accumulator, bias one f32 per column broadcast over the rows, maxf with zero, ftof (nearest_even).
cuda_tile.module @epi {
  entry @epilogue(%A: tile<ptr<f16>>, %B: tile<ptr<f16>>, %bias: tile<ptr<f32>>, %D: tile<ptr<f8E4M3FN>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %ta = make_tensor_view %A, shape = [16, 32], strides = [32, 1] : tensor_view<16x32xf16, strides=[32,1]>
    %tb = make_tensor_view %B, shape = [32, 16], strides = [16, 1] : tensor_view<32x16xf16, strides=[16,1]>
    %tbias = make_tensor_view %bias, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %td = make_tensor_view %D, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf8E4M3FN, strides=[16,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x32), tensor_view<16x32xf16, strides=[32,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x16), tensor_view<32x16xf16, strides=[16,1]>>
    %pbias = make_partition_view %tbias : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %pd = make_partition_view %td : partition_view<tile=(16x16), tensor_view<16x16xf8E4M3FN, strides=[16,1]>>
    %a, %t0 = load_view_tko weak %pa[%c0, %c0] : partition_view<tile=(16x32), tensor_view<16x32xf16, strides=[32,1]>>, tile<i32> -> tile<16x32xf16>, token
    %b, %t1 = load_view_tko weak %pb[%c0, %c0] : partition_view<tile=(32x16), tensor_view<32x16xf16, strides=[16,1]>>, tile<i32> -> tile<32x16xf16>, token
    %bs, %t2 = load_view_tko weak %pbias[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %z = constant <f32: 0.000000e+00> : tile<16x16xf32>
    %acc = mmaf %a, %b, %z : tile<16x32xf16>, tile<32x16xf16>, tile<16x16xf32>
    %bs1 = reshape %bs : tile<16xf32> -> tile<1x16xf32>
    %bsb = broadcast %bs1 : tile<1x16xf32> -> tile<16x16xf32>
    %s = addf %acc, %bsb : tile<16x16xf32>
    %r = maxf %s, %z : tile<16x16xf32>
    %q = ftof %r : tile<16x16xf32> -> tile<16x16xf8E4M3FN>
    %t3 = store_view_tko weak %q, %pd[%c0, %c0] : tile<16x16xf8E4M3FN>, partition_view<tile=(16x16), tensor_view<16x16xf8E4M3FN, strides=[16,1]>>, tile<i32> -> token
  }
}
