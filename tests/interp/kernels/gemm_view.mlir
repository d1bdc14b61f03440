// gemm_view.mlir: C = A B, bf16 operands, f32 accumulator, 16x16 output tiles, a k loop over 16-wide
// slices of A and B through tensor views (padding zero for the partial tiles), the spec's GEMM shape.
cuda_tile.module @gemm {
  entry @gemm_bf16(%A: !cuda_tile.tile<!cuda_tile.ptr<bf16>>, %B: tile<ptr<bf16>>, %C: tile<ptr<f32>>,
                   %M: tile<i32>, %N: tile<i32>, %K: tile<i32>) optimization_hints=<sm_100 = {num_cta_in_cga = 2}> {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %ta = make_tensor_view %A, shape = [%M, %K], strides = [%K, 1] : tile<i32> -> tensor_view<?x?xbf16, strides=[?,1]>
    %tb = make_tensor_view %B, shape = [%K, %N], strides = [%N, 1] : tile<i32> -> tensor_view<?x?xbf16, strides=[?,1]>
    %tc = make_tensor_view %C, shape = [%M, %N], strides = [%N, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xbf16, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xbf16, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(16x16), tensor_view<?x?xf32, strides=[?,1]>>
    %nk:2 = get_index_space_shape %pa : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xbf16, strides=[?,1]>> -> tile<i32>
    %zero = constant <f32: 0.000000e+00> : tile<16x16xf32>
    %acc = for %k in (%c0 to %nk#1, step %c1) : tile<i32>
        iter_values(%a = %zero) -> (tile<16x16xf32>) {
      %x, %t1 = load_view_tko weak %pa[%bx, %k] : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xbf16, strides=[?,1]>>, tile<i32> -> tile<16x16xbf16>, token
      %y, %t2 = load_view_tko weak %pb[%k, %by] : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xbf16, strides=[?,1]>>, tile<i32> -> tile<16x16xbf16>, token
      %r = mmaf %x, %y, %a : tile<16x16xbf16>, tile<16x16xbf16>, tile<16x16xf32>
      continue %r : tile<16x16xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%bx, %by] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }
}
