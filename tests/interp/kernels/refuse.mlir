// refuse.mlir: witnesses of the refusals that are not undefined behaviour: operations and formats the
// pre-check refuses (interp.unsupported_op), and entries no launch can call (interp.bad_launch).
cuda_tile.module @refuse {
  entry @approx_log(%p: tile<ptr<f32>>) {
    %x, %t = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    %y = log %x rounding<approx> : tile<f32>
    %t2 = store_ptr_tko weak %p, %y : tile<ptr<f32>>, tile<f32> -> token
  }
  entry @unknown_op(%p: tile<ptr<f32>>) {
    %x, %t = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    %y = cuda_tile.frobnicate %x {mode = 3} : tile<f32>
  }
  entry @fast_acc(%p: tile<ptr<f32>>) {
    %a = constant <i8: 1> : tile<16x16xi8>
    %c = constant <i32: 0> : tile<16x16xi32>
    %d = mmai %a, %a, %c signed signed fast_acc : tile<16x16xi8>, tile<16x16xi8>, tile<16x16xi32>
  }
  entry @unmodelled_format(%p: tile<ptr<f32>>) {
    %a = constant <f32: 1.0> : tile<4xf32>
    %b = ftof %a : tile<4xf32> -> tile<4xf8E3M4>
  }
  entry @token_param(%t: token) {
    return
  }
  entry @ok_kernel(%p: tile<ptr<f32>>, %x: tile<f32>) {
    %t = store_ptr_tko weak %p, %x : tile<ptr<f32>>, tile<f32> -> token
  }
}
