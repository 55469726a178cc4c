package io.embednorm.spark.execution

import io.embednorm.spark.EmbedNormConfig
import io.embednorm.spark.catalyst.{CausalConvExpression, EmbedNormExpression}
import io.embednorm.spark.internal.DevicePolicy
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarRule, LeafExecNode, ProjectExec, RowToColumnarExec, SparkPlan}

/**
 * Plans [[EmbedNormProjectExec]] for projections that [[ColumnarProjection]] accepts, before Spark
 * inserts its row/columnar transitions; afterwards replaces the `RowToColumnarExec` that Spark put
 * under the operator (for a row child) with [[RowBatchExec]], which batches by
 * `spark.embednorm.batchRows`. Installed by [[io.embednorm.spark.EmbedNormExtensions]].
 *
 * With `spark.embednorm.explain`, every embednorm call left on the CPU row path (in a projection
 * the operator cannot take, in another operator such as a filter, or everywhere with
 * `spark.embednorm.columnar=false`) gets a placement note with the reason, which `EXPLAIN` shows
 * next to the call; projections that stay are also logged (INFO).
 */
class EmbedNormColumnarRule(session: SparkSession) extends ColumnarRule with Logging {

  private def setting[T](entry: EmbedNormConfig.Entry[T]): T =
    entry.read((key: String) => session.conf.getOption(key).orNull)

  override def preColumnarTransitions: Rule[SparkPlan] = new Rule[SparkPlan] {
    override def apply(plan: SparkPlan): SparkPlan = {
      val explain = setting(EmbedNormConfig.EXPLAIN)
      val columnar = setting(EmbedNormConfig.COLUMNAR)
      if (!columnar && !explain) {
        plan
      } else {
        plan.transformUp {
          case project: ProjectExec
              if columnar && project.projectList.exists(ColumnarProjection.usesEmbedNorm) =>
            replace(project, explain)
          case node if explain && evaluatesEmbedNorm(node) =>
            val reason =
              if (!columnar) s"${EmbedNormConfig.COLUMNAR.name()} is false"
              else s"${node.nodeName} evaluates it, and the columnar operator takes projections only"
            annotate(node, reason)
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

  private def replace(project: ProjectExec, explain: Boolean): SparkPlan = {
    ColumnarProjection.plan(project.projectList, project.child.output) match {
      case Left(reason) =>
        if (explain) {
          logInfo(s"embednorm: the projection ${project.projectList.mkString("[", ", ", "]")} " +
            s"stays on the CPU row path: $reason")
          annotate(project, reason)
        } else {
          project
        }
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

  /**
   * Whether `node` evaluates embednorm calls on the row path. Leaves are left alone: a scan's
   * pushed-down filters are copies of conditions that an operator above it evaluates.
   */
  private def evaluatesEmbedNorm(node: SparkPlan): Boolean = node match {
    case _: EmbedNormProjectExec | _: LeafExecNode => false
    case other => other.expressions.exists(ColumnarProjection.usesEmbedNorm)
  }

  /** `node` with a placement note saying why on the outermost embednorm call of each chain. */
  private def annotate(node: SparkPlan, reason: String): SparkPlan = {
    val note = ColumnarProjection.rowPathNote(reason)
    node.mapExpressions(annotate(_, note, innerStep = false))
  }

  private def annotate(expression: Expression, note: String, innerStep: Boolean): Expression =
    expression match {
      case function: EmbedNormExpression =>
        val children = function.children.zipWithIndex.map { case (child, position) =>
          annotate(child, note, innerStep = position == 0)
        }
        val annotated = function.withNewChildren(children).asInstanceOf[EmbedNormExpression]
        if (innerStep) annotated else annotated.withPlacementNote(note)
      case call: CausalConvExpression =>
        call.mapChildren(annotate(_, note, innerStep = false)).asInstanceOf[CausalConvExpression]
          .withPlacementNote(note)
      case other => other.mapChildren(annotate(_, note, innerStep = false))
    }
}
