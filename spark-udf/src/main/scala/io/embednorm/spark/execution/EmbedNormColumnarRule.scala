package io.embednorm.spark.execution

import io.embednorm.spark.EmbedNormConfig
import io.embednorm.spark.internal.DevicePolicy
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarRule, ProjectExec, RowToColumnarExec, SparkPlan}

/**
 * Plans [[EmbedNormProjectExec]] for projections that [[ColumnarProjection]] accepts, before Spark
 * inserts its row/columnar transitions; afterwards replaces the `RowToColumnarExec` that Spark put
 * under the operator (for a row child) with [[RowBatchExec]], which batches by
 * `spark.embednorm.batchRows`. A projection that stays on the row path is logged with the reason
 * when `spark.embednorm.explain` is set. Installed by [[io.embednorm.spark.EmbedNormExtensions]].
 */
class EmbedNormColumnarRule(session: SparkSession) extends ColumnarRule with Logging {

  private def setting[T](entry: EmbedNormConfig.Entry[T]): T =
    entry.read((key: String) => session.conf.getOption(key).orNull)

  override def preColumnarTransitions: Rule[SparkPlan] = new Rule[SparkPlan] {
    override def apply(plan: SparkPlan): SparkPlan = {
      if (!setting(EmbedNormConfig.COLUMNAR)) {
        plan
      } else {
        plan.transformUp {
          case project: ProjectExec if project.projectList.exists(ColumnarProjection.usesEmbedNorm) =>
            replace(project)
        }
      }
    }
  }

  override def postColumnarTransitions: Rule[SparkPlan] = new Rule[SparkPlan] {
    override def apply(plan: SparkPlan): SparkPlan = plan.transformUp {
      case operator @ EmbedNormProjectExec(_, RowToColumnarExec(rows), _, _, _, _) =>
        operator.withNewChildren(Seq(RowBatchExec(rows, setting(EmbedNormConfig.BATCH_ROWS))))
    }
  }

  private def replace(project: ProjectExec): SparkPlan = {
    val explain = setting(EmbedNormConfig.EXPLAIN)
    ColumnarProjection.plan(project.projectList, project.child.output) match {
      case Left(reason) =>
        if (explain) {
          logInfo(s"embednorm: the projection ${project.projectList.mkString("[", ", ", "]")} " +
            s"stays on the CPU row path: $reason")
        }
        project
      case Right(columns) =>
        val device = setting(EmbedNormConfig.DEVICE)
        val description = ColumnarProjection.describe(columns, DevicePolicy.placement(device))
        if (explain) {
          logInfo(s"embednorm: the projection ${project.projectList.mkString("[", ", ", "]")} " +
            s"runs in the columnar operator: $description")
        }
        EmbedNormProjectExec(
          project.projectList,
          project.child,
          columns,
          device,
          setting(EmbedNormConfig.CONCURRENT_GPU_TASKS),
          if (explain) Some(description) else None)
    }
  }
}
