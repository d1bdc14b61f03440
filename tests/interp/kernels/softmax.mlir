// softmax.mlir: row softmax of an R x 16 f32 matrix, 4 rows per block: a max reduce (hex identity -inf),
// subf, exp, a sum reduce, divf; the reductions run in index order (docs/interp.md).
cuda_tile.module @sm {
  entry @softmax(%X: tile<ptr<f32>>, %Y: tile<ptr<f32>>, %R: tile<i64>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %tx = make_tensor_view %X, shape = [%R, 16], strides = [16, 1] : tile<i64> -> tensor_view<?x16xf32, strides=[16,1]>
    %ty = make_tensor_view %Y, shape = [%R, 16], strides = [16, 1] : tile<i64> -> tensor_view<?x16xf32, strides=[16,1]>
    %px = make_partition_view %tx : partition_view<tile=(4x16), tensor_view<?x16xf32, strides=[16,1]>>
    %py = make_partition_view %ty : partition_view<tile=(4x16), tensor_view<?x16xf32, strides=[16,1]>>
    %x, %t0 = load_view_tko weak %px[%bx, %c0] : partition_view<tile=(4x16), tensor_view<?x16xf32, strides=[16,1]>>, tile<i32> -> tile<4x16xf32>, token
    %m = reduce %x dim=1 identities=[0xFF800000 : f32] : tile<4x16xf32> -> tile<4xf32>
    (%e: tile<f32>, %acc: tile<f32>) {
      %mx = maxf %e, %acc : tile<f32>
      yield %mx : tile<f32>
    }
    %m2 = reshape %m : tile<4xf32> -> tile<4x1xf32>
    %mb = broadcast %m2 : tile<4x1xf32> -> tile<4x16xf32>
    %d = subf %x, %mb : tile<4x16xf32>
    %ex = exp %d : tile<4x16xf32>
    %s = reduce %ex dim=1 identities=[0.000000e+00 : f32] : tile<4x16xf32> -> tile<4xf32>
    (%v: tile<f32>, %a: tile<f32>) {
      %sum = addf %v, %a : tile<f32>
      yield %sum : tile<f32>
    }
    %s2 = reshape %s : tile<4xf32> -> tile<4x1xf32>
    %sb = broadcast %s2 : tile<4x1xf32> -> tile<4x16xf32>
    %y = divf %ex, %sb : tile<4x16xf32>
    %t1 = store_view_tko weak %y, %py[%bx, %c0] token = %t0 : tile<4x16xf32>, partition_view<tile=(4x16), tensor_view<?x16xf32, strides=[16,1]>>, tile<i32> -> token
  }
}
