package io.embednorm.kernels.cpu;
import io.embednorm.kernels.*;
import java.util.*;
/**
 * One long-lived JVM: FIRST-OPS at widths 32 and 768, then each of OPS at each of WIDTHS (comma
 * lists), as MixedProbe times them; a Spark executor runs ops and widths one after another so.
 */
public class SweepProbe {
  @SuppressWarnings("unchecked")
  public static void main(String[] a) throws Exception {
    List<RowPasses> passes = (List<RowPasses>) Class.forName("io.embednorm.kernels.cpu.VectorRowPasses").getDeclaredMethod("variants").invoke(null);
    RowPasses pass = passes.get(1);
    for (String first : a[0].split(",")) for (int w : new int[] {32, 768}) MixedProbe.run(pass, Op.valueOf(first.toUpperCase()), w, 3);
    for (String op : a[1].split(","))
      for (String w : a[2].split(",")) MixedProbe.run(pass, Op.valueOf(op.toUpperCase()), Integer.parseInt(w), 4);
  }
}
