// Probe (bench/cpu-overlap/README.md): rms_norm at width 32 read from and written to the direct
// buffers with FloatVector.fromByteBuffer/intoByteBuffer, no chunk copies, against the engine.
package io.embednorm.kernels.cpu;

import io.embednorm.kernels.*;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;

public class DirectProbe {
  static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
  static final ByteOrder O = ByteOrder.nativeOrder();

  static float combine(FloatVector lanes) {
    LongVector bits = lanes.reinterpretAsLongs();
    FloatVector pairs = lanes.add(bits.lanewise(VectorOperators.LSHL, 32).or(bits.lanewise(VectorOperators.LSHR, 32)).reinterpretAsFloats());
    return (pairs.lane(0) + pairs.lane(2)) + (pairs.lane(4) + pairs.lane(6));
  }

  // rms_norm width 32, groups of G rows: pass 1 sums from the buffer, pass 2 scales from buffer to output buffer
  static void rmsDirect(ByteBuffer in, ByteBuffer out, long rows, float[] sums) {
    final int G = 32;
    for (long g = 0; g < rows; g += G) {
      int count = (int) Math.min(G, rows - g);
      int base = (int) (g * 128);
      for (int r = 0; r < count; r++) {
        int at = base + r * 128;
        FloatVector a = FloatVector.fromByteBuffer(F, in, at, O);
        FloatVector b = FloatVector.fromByteBuffer(F, in, at + 32, O);
        FloatVector c = FloatVector.fromByteBuffer(F, in, at + 64, O);
        FloatVector d = FloatVector.fromByteBuffer(F, in, at + 96, O);
        sums[r] = combine(FloatVector.zero(F).add(a.mul(a)).add(b.mul(b)).add(c.mul(c)).add(d.mul(d)));
      }
      for (int r = 0; r < count; r++) sums[r] = (float) (1 / Math.sqrt(sums[r] / 32.0 + 1e-6));
      for (int r = 0; r < count; r++) {
        int at = base + r * 128;
        float s = sums[r];
        FloatVector.fromByteBuffer(F, in, at, O).mul(s).intoByteBuffer(out, at, O);
        FloatVector.fromByteBuffer(F, in, at + 32, O).mul(s).intoByteBuffer(out, at + 32, O);
        FloatVector.fromByteBuffer(F, in, at + 64, O).mul(s).intoByteBuffer(out, at + 64, O);
        FloatVector.fromByteBuffer(F, in, at + 96, O).mul(s).intoByteBuffer(out, at + 96, O);
      }
    }
  }

  public static void main(String[] args) {
    int bytes = 256 << 20;
    ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(O);
    ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(O);
    java.util.Random rnd = new java.util.Random(3);
    for (int i = 0; i < bytes; i += 4) in.putFloat(i, (float) rnd.nextGaussian());
    int rows = bytes / 128;
    CpuEngine engine = new CpuEngine(1);
    Normalization rms = Normalization.of(Op.RMS_NORM);
    RowBatch batch = RowBatch.fixedWidth(ElementType.FLOAT32, rows, 32, in, out);
    float[] sums = new float[64];
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      out.clear(); in.clear(); out.put(in); in.clear(); out.clear();
      long t1 = System.nanoTime();
      engine.normalize(rms, batch);
      long t2 = System.nanoTime();
      rmsDirect(in, out, rows, sums);
      long t3 = System.nanoTime();
      System.out.printf("copy %.1f  engine %.1f  direct %.1f GB/s%n", 2.0 * bytes / (t1 - t0), 2.0 * bytes / (t2 - t1), 2.0 * bytes / (t3 - t2));
    }
    engine.close();
  }
}
