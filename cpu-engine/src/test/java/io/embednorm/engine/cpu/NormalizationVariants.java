package io.embednorm.engine.cpu;

import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Every parameter combination the random tests run an op with. */
public final class NormalizationVariants {
  private NormalizationVariants() {}

  /**
   * The default eps, eps = 0 and eps = 0.1, each without and with a random weight (and, for
   * LayerNorm, with weight and bias, and with a bias alone) of {@code width} values.
   */
  public static List<Normalization> of(Op op, int width, Random random) {
    List<Normalization> variants = new ArrayList<>();
    List<Normalization> epsilons = new ArrayList<>();
    Normalization plain = Normalization.of(op);
    epsilons.add(plain);
    if (op.takesEpsilon()) {
      epsilons.add(plain.withEpsilon(0.0));
      epsilons.add(plain.withEpsilon(0.1));
    }
    for (Normalization normalization : epsilons) {
      variants.add(normalization);
      if (op.takesWeight()) {
        variants.add(normalization.withWeight(randomValues(random, width, 1.0, 0.5)));
      }
      if (op.takesBias()) {
        variants.add(
            normalization
                .withWeight(randomValues(random, width, 1.0, 0.5))
                .withBias(randomValues(random, width, 0.0, 1.0)));
        variants.add(normalization.withBias(randomValues(random, width, 0.0, 1.0)));
      }
    }
    return variants;
  }

  private static double[] randomValues(Random random, int width, double mean, double spread) {
    double[] values = new double[width];
    for (int i = 0; i < width; i++) {
      values[i] = mean + spread * random.nextGaussian();
    }
    return values;
  }
}
