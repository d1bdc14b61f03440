// mxfp8.mlir: an MXFP8 GEMM: C (16x16 f32) = sum_k (A[i][k] sa[i][k/32]) (B[k][j] sb[k/32][j]) + C0, with
// f8E4M3FN elements and f8E8M0FNU scales (block 32, K = 64), one mmaf_scaled.
cuda_tile.module @mx {
  entry @mxfp8(%A: tile<ptr<f8E4M3FN>>, %B: tile<ptr<f8E4M3FN>>, %SA: tile<ptr<f8E8M0FNU>>, %SB: tile<ptr<f8E8M0FNU>>, %C: tile<ptr<f32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %ta = make_tensor_view %A, shape = [16, 64], strides = [64, 1] : tensor_view<16x64xf8E4M3FN, strides=[64,1]>
    %tb = make_tensor_view %B, shape = [64, 16], strides = [16, 1] : tensor_view<64x16xf8E4M3FN, strides=[16,1]>
    %tsa = make_tensor_view %SA, shape = [16, 2], strides = [2, 1] : tensor_view<16x2xf8E8M0FNU, strides=[2,1]>
    %tsb = make_tensor_view %SB, shape = [2, 16], strides = [16, 1] : tensor_view<2x16xf8E8M0FNU, strides=[16,1]>
    %tc = make_tensor_view %C, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf32, strides=[16,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x64), tensor_view<16x64xf8E4M3FN, strides=[64,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(64x16), tensor_view<64x16xf8E4M3FN, strides=[16,1]>>
    %psa = make_partition_view %tsa : partition_view<tile=(16x2), tensor_view<16x2xf8E8M0FNU, strides=[2,1]>>
    %psb = make_partition_view %tsb : partition_view<tile=(2x16), tensor_view<2x16xf8E8M0FNU, strides=[16,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>
    %a, %t0 = load_view_tko weak %pa[%c0, %c0] : partition_view<tile=(16x64), tensor_view<16x64xf8E4M3FN, strides=[64,1]>>, tile<i32> -> tile<16x64xf8E4M3FN>, token
    %b, %t1 = load_view_tko weak %pb[%c0, %c0] : partition_view<tile=(64x16), tensor_view<64x16xf8E4M3FN, strides=[16,1]>>, tile<i32> -> tile<64x16xf8E4M3FN>, token
    %sa, %t2 = load_view_tko weak %psa[%c0, %c0] : partition_view<tile=(16x2), tensor_view<16x2xf8E8M0FNU, strides=[2,1]>>, tile<i32> -> tile<16x2xf8E8M0FNU>, token
    %sb, %t3 = load_view_tko weak %psb[%c0, %c0] : partition_view<tile=(2x16), tensor_view<2x16xf8E8M0FNU, strides=[16,1]>>, tile<i32> -> tile<2x16xf8E8M0FNU>, token
    %c, %t4 = load_view_tko weak %pc[%c0, %c0] : partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> tile<16x16xf32>, token
    %d = mmaf_scaled %a, %b, %c, %sa, %sb : tile<16x64xf8E4M3FN>, tile<64x16xf8E4M3FN>, tile<16x16xf32>, tile<16x2xf8E8M0FNU>, tile<2x16xf8E8M0FNU>
    %t5 = store_view_tko weak %d, %pc[%c0, %c0] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> token
  }
}
