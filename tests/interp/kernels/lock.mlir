// lock.mlir: critical sections under a spin lock (atomic_cas_tko acquires, an exchange or a store releases): block
// bx adds X[4 bx + j] * Y[4 bx + j] into S[j] (fma) and X[4 bx + j] into T[j] (addf), and subtracts Y[4 bx + j]
// from U[j] (subf); bounds mode takes each as a sum in any order of the blocks.  The refused sections: a store
// that is not old + v, a branch on the value read under the lock, old + v stored in a later section or after the
// release, a sum both atomic and under the lock.
cuda_tile.module @locks {
  // the lock released by atomic_rmw_tko xchg; pointer tiles of 4 lanes
  entry @lock_sum(%X: tile<ptr<f32>>, %Y: tile<ptr<f32>>, %S: tile<ptr<f32>>, %T: tile<ptr<f32>>, %U: tile<ptr<f32>>, %L: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c4 = constant <i32: 4> : tile<4xi32>
    %io = iota : tile<4xi32>
    %bxr = reshape %bx : tile<i32> -> tile<1xi32>
    %bx4 = broadcast %bxr : tile<1xi32> -> tile<4xi32>
    %base = muli %bx4, %c4 : tile<4xi32>
    %idx = addi %base, %io : tile<4xi32>
    %xr = reshape %X : tile<ptr<f32>> -> tile<1xptr<f32>>
    %xb = broadcast %xr : tile<1xptr<f32>> -> tile<4xptr<f32>>
    %px = offset %xb, %idx : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
    %yr = reshape %Y : tile<ptr<f32>> -> tile<1xptr<f32>>
    %yb = broadcast %yr : tile<1xptr<f32>> -> tile<4xptr<f32>>
    %py = offset %yb, %idx : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
    %sr = reshape %S : tile<ptr<f32>> -> tile<1xptr<f32>>
    %sb = broadcast %sr : tile<1xptr<f32>> -> tile<4xptr<f32>>
    %ps = offset %sb, %io : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
    %tr = reshape %T : tile<ptr<f32>> -> tile<1xptr<f32>>
    %tb = broadcast %tr : tile<1xptr<f32>> -> tile<4xptr<f32>>
    %pt = offset %tb, %io : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
    %ur = reshape %U : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ub = broadcast %ur : tile<1xptr<f32>> -> tile<4xptr<f32>>
    %pu = offset %ub, %io : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<4xptr<f32>> -> tile<4xf32>, token
    %y, %t1 = load_ptr_tko weak %py : tile<4xptr<f32>> -> tile<4xf32>, token
    %w = exp2 %x : tile<4xf32>
    %spin = loop iter_values(%n = %c0) : tile<i32> -> tile<i32> {
      %old, %tc = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
      %busy = cmpi equal %old, %c1, signed : tile<i32> -> tile<i1>
      if %busy {
      } else {
        break %n : tile<i32>
      }
      %n2 = addi %n, %c1 : tile<i32>
      continue %n2 : tile<i32>
    }
    %s, %t2 = load_ptr_tko weak %ps : tile<4xptr<f32>> -> tile<4xf32>, token
    %t, %t3 = load_ptr_tko weak %pt : tile<4xptr<f32>> -> tile<4xf32>, token
    %u, %t4 = load_ptr_tko weak %pu : tile<4xptr<f32>> -> tile<4xf32>, token
    %s2 = fma %w, %y, %s : tile<4xf32>
    %t2v = addf %x, %t : tile<4xf32>
    %u2 = subf %u, %y : tile<4xf32>
    %t5 = store_ptr_tko weak %ps, %s2 : tile<4xptr<f32>>, tile<4xf32> -> token
    %t6 = store_ptr_tko weak %pt, %t2v : tile<4xptr<f32>>, tile<4xf32> -> token
    %t7 = store_ptr_tko weak %pu, %u2 : tile<4xptr<f32>>, tile<4xf32> -> token
    %o, %t8 = atomic_rmw_tko acq_rel device %L, xchg, %c0 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
  }
  // the same sum into S[0] (0-d tiles), the lock released by a plain store
  entry @lock_store_release(%X: tile<ptr<f32>>, %S: tile<ptr<f32>>, %L: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %px = offset %X, %bx : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<ptr<f32>> -> tile<f32>, token
    %spin = loop iter_values(%n = %c0) : tile<i32> -> tile<i32> {
      %old, %tc = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
      %busy = cmpi equal %old, %c1, signed : tile<i32> -> tile<i1>
      if %busy {
      } else {
        break %n : tile<i32>
      }
      %n2 = addi %n, %c1 : tile<i32>
      continue %n2 : tile<i32>
    }
    %s, %t1 = load_ptr_tko weak %S : tile<ptr<f32>> -> tile<f32>, token
    %s2 = addf %s, %x : tile<f32>
    %t2 = store_ptr_tko weak %S, %s2 : tile<ptr<f32>>, tile<f32> -> token
    %t3 = store_ptr_tko weak %L, %c0 : tile<ptr<i32>>, tile<i32> -> token
  }
  // refused: under the lock, S[0] = x (the last block's value wins: it depends on the order of the lock)
  entry @lock_plain(%X: tile<ptr<f32>>, %S: tile<ptr<f32>>, %L: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %px = offset %X, %bx : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<ptr<f32>> -> tile<f32>, token
    %old, %tc = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %t2 = store_ptr_tko weak %S, %x : tile<ptr<f32>>, tile<f32> -> token
    %o, %t3 = atomic_rmw_tko acq_rel device %L, xchg, %c0 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
  }
  // refused: a branch on the value read under the lock (add x only while S[0] < 4)
  entry @lock_branch(%X: tile<ptr<f32>>, %S: tile<ptr<f32>>, %L: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %four = constant <f32: 4.0> : tile<f32>
    %px = offset %X, %bx : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<ptr<f32>> -> tile<f32>, token
    %old, %tc = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %s, %t1 = load_ptr_tko weak %S : tile<ptr<f32>> -> tile<f32>, token
    %small = cmpf less_than ordered %s, %four : tile<f32> -> tile<i1>
    if %small {
      %s2 = addf %s, %x : tile<f32>
      %t2 = store_ptr_tko weak %S, %s2 : tile<ptr<f32>>, tile<f32> -> token
    }
    %o, %t3 = atomic_rmw_tko acq_rel device %L, xchg, %c0 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
  }
  // refused: S[0] read under the lock, the lock released and taken again, then S[0] = old + x stored (another block
  // may have added to S[0] between the two sections: a lost update)
  entry @lock_two_sections(%X: tile<ptr<f32>>, %S: tile<ptr<f32>>, %L: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %px = offset %X, %bx : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<ptr<f32>> -> tile<f32>, token
    %o1, %t1 = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %s, %t2 = load_ptr_tko weak %S : tile<ptr<f32>> -> tile<f32>, token
    %r1, %t3 = atomic_rmw_tko acq_rel device %L, xchg, %c0 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %o2, %t4 = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %s2 = addf %s, %x : tile<f32>
    %t5 = store_ptr_tko weak %S, %s2 : tile<ptr<f32>>, tile<f32> -> token
    %r2, %t6 = atomic_rmw_tko acq_rel device %L, xchg, %c0 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
  }
  // refused: S[0] = old + x computed under the lock and stored after its release
  entry @lock_late_store(%X: tile<ptr<f32>>, %S: tile<ptr<f32>>, %L: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %px = offset %X, %bx : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<ptr<f32>> -> tile<f32>, token
    %o1, %t1 = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %s, %t2 = load_ptr_tko weak %S : tile<ptr<f32>> -> tile<f32>, token
    %s2 = addf %s, %x : tile<f32>
    %r1, %t3 = atomic_rmw_tko acq_rel device %L, xchg, %c0 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %t4 = store_ptr_tko weak %S, %s2 : tile<ptr<f32>>, tile<f32> -> token
  }
  // refused: S[0] summed into by an atomic add and under the lock (the atomic add may be lost between a section's
  // load and store)
  entry @lock_mixed(%X: tile<ptr<f32>>, %S: tile<ptr<f32>>, %L: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %px = offset %X, %bx : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %x, %t0 = load_ptr_tko weak %px : tile<ptr<f32>> -> tile<f32>, token
    %a, %t1 = atomic_rmw_tko relaxed device %S, addf, %x : tile<ptr<f32>>, tile<f32> -> tile<f32>, token
    %o1, %t2 = atomic_cas_tko acq_rel device %L, %c0, %c1 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    %s, %t3 = load_ptr_tko weak %S : tile<ptr<f32>> -> tile<f32>, token
    %s2 = addf %s, %x : tile<f32>
    %t4 = store_ptr_tko weak %S, %s2 : tile<ptr<f32>>, tile<f32> -> token
    %r1, %t5 = atomic_rmw_tko acq_rel device %L, xchg, %c0 : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
  }
}
