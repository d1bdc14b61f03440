// bounds13.mlir: bounds mode through Tile IR 13.3 / 13.4 ops on values that carry enclosures (exp2 lowered to ex2.approx): fpowi, a float atomic add from every block (a sum in any order), a float compare-and-swap and a pack of an enclosure (interp.undecided witnesses), insert, an alloca and a strided view keeping enclosures.
cuda_tile.module @bounds13 {
  // Y = fpowi(exp2(X), N)
  entry @powi(%X: tile<ptr<f32>>, %N: tile<ptr<i32>>, %Y: tile<ptr<f32>>) {
    %io = iota : tile<16xi32>
    %xr = reshape %X : tile<ptr<f32>> -> tile<1xptr<f32>>
    %xb = broadcast %xr : tile<1xptr<f32>> -> tile<16xptr<f32>>
    %px = offset %xb, %io : tile<16xptr<f32>>, tile<16xi32> -> tile<16xptr<f32>>
    %nr = reshape %N : tile<ptr<i32>> -> tile<1xptr<i32>>
    %nb = broadcast %nr : tile<1xptr<i32>> -> tile<16xptr<i32>>
    %pn = offset %nb, %io : tile<16xptr<i32>>, tile<16xi32> -> tile<16xptr<i32>>
    %yr = reshape %Y : tile<ptr<f32>> -> tile<1xptr<f32>>
    %yb = broadcast %yr : tile<1xptr<f32>> -> tile<16xptr<f32>>
    %py = offset %yb, %io : tile<16xptr<f32>>, tile<16xi32> -> tile<16xptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<16xptr<f32>> -> tile<16xf32>, token
    %n, %t1 = load_ptr_tko weak %pn : tile<16xptr<i32>> -> tile<16xi32>, token
    %e = exp2 %x : tile<16xf32>
    %r = fpowi %e, %n : tile<16xf32>, tile<16xi32>
    %s = store_ptr_tko weak %py, %r : tile<16xptr<f32>>, tile<16xf32> -> token
  }
  // grid of 8 blocks: block b adds X[b] to F[0] with a float atomic add
  entry @atomic_sum(%X: tile<ptr<f32>>, %F: tile<ptr<f32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %p = offset %X, %bx : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %v, %t0 = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    %o, %t1 = atomic_rmw_tko relaxed device %F, addf, %v : tile<ptr<f32>>, tile<f32> -> tile<f32>, token
  }
  // F[0] = exp2(X[0]) stored, then compare-and-swap F[0] from 1.0 to 2.0: the outcome depends on the device
  entry @cas(%X: tile<ptr<f32>>, %F: tile<ptr<f32>>) {
    %x, %t0 = load_ptr_tko weak %X : tile<ptr<f32>> -> tile<f32>, token
    %e = exp2 %x : tile<f32>
    %t1 = store_ptr_tko weak %F, %e : tile<ptr<f32>>, tile<f32> -> token
    %one = constant <f32: 1.0> : tile<f32>
    %two = constant <f32: 2.0> : tile<f32>
    %o, %t2 = atomic_cas_tko relaxed device %F, %one, %two token=%t1 : tile<ptr<f32>>, tile<f32> -> tile<f32>, token
  }
  // the bytes of exp2(X) packed: a bit pattern of a value the device does not fix
  entry @pack(%X: tile<ptr<f32>>, %B: tile<ptr<i8>>) {
    %io = iota : tile<4xi32>
    %xr = reshape %X : tile<ptr<f32>> -> tile<1xptr<f32>>
    %xb = broadcast %xr : tile<1xptr<f32>> -> tile<4xptr<f32>>
    %px = offset %xb, %io : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
    %ib = iota : tile<16xi32>
    %br = reshape %B : tile<ptr<i8>> -> tile<1xptr<i8>>
    %bb = broadcast %br : tile<1xptr<i8>> -> tile<16xptr<i8>>
    %pb = offset %bb, %ib : tile<16xptr<i8>>, tile<16xi32> -> tile<16xptr<i8>>
    %x, %t0 = load_ptr_tko weak %px : tile<4xptr<f32>> -> tile<4xf32>, token
    %e = exp2 %x : tile<4xf32>
    %b = pack %e : tile<4xf32> -> tile<16xi8>
    %s = store_ptr_tko weak %pb, %b : tile<16xptr<i8>>, tile<16xi8> -> token
  }
  // exp2(X) through an alloca and back, inserted as slice 1 of a 2 x 8 tile of X, stored through a strided
  // view (traversal strides [1, 8]) of the 2 x 8 Y: Y[0, :] = X[0:8], Y[1, :] = exp2(X[8:16])
  entry @keep(%X: tile<ptr<f32>>, %Y: tile<ptr<f32>>) {
    %io = iota : tile<8xi32>
    %c8 = constant <i32: 8> : tile<8xi32>
    %io8 = addi %io, %c8 : tile<8xi32>
    %xr = reshape %X : tile<ptr<f32>> -> tile<1xptr<f32>>
    %xb = broadcast %xr : tile<1xptr<f32>> -> tile<8xptr<f32>>
    %px = offset %xb, %io : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
    %px8 = offset %xb, %io8 : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
    %x0, %t0 = load_ptr_tko weak %px : tile<8xptr<f32>> -> tile<8xf32>, token
    %x1, %t1 = load_ptr_tko weak %px8 : tile<8xptr<f32>> -> tile<8xf32>, token
    %e = exp2 %x1 : tile<8xf32>
    %a = alloca num_elem = 8, alignment = 16 : tile<ptr<f32>>
    %ar = reshape %a : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ab = broadcast %ar : tile<1xptr<f32>> -> tile<8xptr<f32>>
    %pa = offset %ab, %io : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
    %t2 = store_ptr_tko weak %pa, %e : tile<8xptr<f32>>, tile<8xf32> -> token
    %back, %t3 = load_ptr_tko weak %pa token = %t2 : tile<8xptr<f32>> -> tile<8xf32>, token
    %r0 = reshape %x0 : tile<8xf32> -> tile<1x8xf32>
    %r1 = reshape %back : tile<8xf32> -> tile<1x8xf32>
    %w = broadcast %r0 : tile<1x8xf32> -> tile<2x8xf32>
    %k1 = constant <i32: 1> : tile<i32>
    %k0 = constant <i32: 0> : tile<i32>
    %ins = insert %r1, %w[%k1, %k0] : tile<1x8xf32>, tile<2x8xf32>
    %ty = make_tensor_view %Y, shape = [2, 8], strides = [8, 1] : tensor_view<2x8xf32, strides=[8,1]>
    %sv = make_strided_view %ty : strided_view<tile=(2x8), traversal_strides=[1,8], tensor_view<2x8xf32, strides=[8,1]>>
    %t4 = store_view_tko weak %ins, %sv[%k0, %k0] : tile<2x8xf32>, strided_view<tile=(2x8), traversal_strides=[1,8], tensor_view<2x8xf32, strides=[8,1]>>, tile<i32> -> token
  }
}
