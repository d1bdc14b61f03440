// loops.mlir: control flow: a for whose body continues early inside an if, a loop that breaks with two
// values, an if with a result and an else region, print_tko, and scalar stores through offset pointers.
cuda_tile.module @ctl {
  entry @loops(%out: tile<ptr<i32>>, %n: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %c3 = constant <i32: 3> : tile<i32>
    %c10 = constant <i32: 10> : tile<i32>
    %c1000 = constant <i32: 1000> : tile<i32>
    %s = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %r = remi %i, %c3 signed : tile<i32>
      %z = cmpi equal %r, %c0, signed : tile<i32> -> tile<i1>
      if %z {
        continue %acc : tile<i32>
      }
      %a2 = addi %acc, %i overflow<no_signed_wrap> : tile<i32>
      continue %a2 : tile<i32>
    }
    %res:2 = loop iter_values(%k = %c0, %x = %c1) : tile<i32>, tile<i32> -> tile<i32>, tile<i32> {
      %big = cmpi greater_than %x, %c1000, signed : tile<i32> -> tile<i1>
      if %big {
        break %k, %x : tile<i32>, tile<i32>
      }
      %k2 = addi %k, %c1 : tile<i32>
      %x2a = muli %x, %c2 : tile<i32>
      %x2 = addi %x2a, %c1 : tile<i32>
      continue %k2, %x2 : tile<i32>, tile<i32>
    }
    %gt = cmpi greater_than %n, %c10, signed : tile<i32> -> tile<i1>
    %v = if %gt -> (tile<i32>) {
      yield %s : tile<i32>
    } else {
      %ng = negi %s : tile<i32>
      yield %ng : tile<i32>
    }
    %tk = print_tko "sum=%d steps=%d last=%d\0A", %v, %res#0, %res#1 : tile<i32>, tile<i32>, tile<i32> -> token
    %t0 = store_ptr_tko weak %out, %v : tile<ptr<i32>>, tile<i32> -> token
    %p1 = offset %out, %c1 : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %t1 = store_ptr_tko weak %p1, %res#0 token = %t0 : tile<ptr<i32>>, tile<i32> -> token
    %p2 = offset %out, %c2 : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %t2 = store_ptr_tko weak %p2, %res#1 token = %t1 : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
