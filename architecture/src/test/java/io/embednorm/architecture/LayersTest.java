package io.embednorm.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.embednorm.arrow.fixture.ReachesIntoTheCpuEngine;
import io.embednorm.engine.cpu.CpuEngine;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The modules' layers, checked on the built classes (docs/ARCHITECTURE.md draws them): surfaces
 * reach engines only through the contract, the contract names no engine, and the two engines never
 * name each other or a surface.
 */
class LayersTest {
  static final String[] SURFACES = {
    "io.embednorm.arrow..", "io.embednorm.spark..", "io.embednorm.jobs.."
  };
  static final String[] ENGINES = {"io.embednorm.engine.cpu..", "io.embednorm.engine.cuda.."};

  /** Surfaces depend on io.embednorm.engine alone; engines come through ServiceLoader. */
  static final ArchRule SURFACES_USE_THE_CONTRACT =
      noClasses()
          .that()
          .resideInAnyPackage(SURFACES)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.embednorm.engine.cpu..",
              "io.embednorm.engine.cuda..",
              "io.embednorm.engine.spi..")
          .because("surfaces go through the engine contract in io.embednorm.engine");

  static final ArchRule CONTRACT_NAMES_NO_ENGINE =
      noClasses()
          .that()
          .resideInAnyPackage("io.embednorm.engine", "io.embednorm.engine.spi")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(ENGINES)
          .because("engines are found through io.embednorm.engine.spi.EngineProvider");

  static final ArchRule ENGINES_NAME_NO_SURFACE =
      noClasses()
          .that()
          .resideInAnyPackage(ENGINES)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(SURFACES)
          .because("engines know the contract only");

  static final ArchRule CPU_NAMES_NO_CUDA =
      noClasses()
          .that()
          .resideInAPackage("io.embednorm.engine.cpu..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.embednorm.engine.cuda..");

  static final ArchRule CUDA_NAMES_NO_CPU =
      noClasses()
          .that()
          .resideInAPackage("io.embednorm.engine.cuda..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.embednorm.engine.cpu..");

  private static JavaClasses production;

  @BeforeAll
  static void importTheBuiltClasses() {
    production =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.embednorm");
  }

  @Test
  void everyModuleIsImported() {
    for (String module :
        new String[] {
          "io.embednorm.engine",
          "io.embednorm.engine.cpu",
          "io.embednorm.engine.cuda",
          "io.embednorm.arrow",
          "io.embednorm.spark",
          "io.embednorm.jobs"
        }) {
      assertThat(production.stream().filter(type -> type.getPackageName().equals(module)))
          .as("classes of %s", module)
          .isNotEmpty();
    }
  }

  @Test
  void surfacesUseTheContractOnly() {
    SURFACES_USE_THE_CONTRACT.check(production);
  }

  @Test
  void theContractNamesNoEngine() {
    CONTRACT_NAMES_NO_ENGINE.check(production);
  }

  @Test
  void enginesNameNoSurface() {
    ENGINES_NAME_NO_SURFACE.check(production);
  }

  @Test
  void theEnginesNameEachOtherNot() {
    CPU_NAMES_NO_CUDA.check(production);
    CUDA_NAMES_NO_CPU.check(production);
  }

  /** The rule is not vacuous: a surface class that names the CPU engine breaks it. */
  @Test
  void aSurfaceThatReachesIntoAnEngineFails() {
    JavaClasses violating =
        new ClassFileImporter().importClasses(ReachesIntoTheCpuEngine.class, CpuEngine.class);
    assertThatThrownBy(() -> SURFACES_USE_THE_CONTRACT.check(violating))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining(ReachesIntoTheCpuEngine.class.getName())
        .hasMessageContaining(CpuEngine.class.getName());
  }
}
