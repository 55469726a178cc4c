package io.embednorm.spark.catalyst

import scala.collection.mutable

import io.embednorm.spark.internal.DevicePolicy
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Applies `spark.embednorm.device` once per analyzed query that uses an embednorm function, so
 * that `gpu` with no usable GPU fails at analysis, naming the reason, before any task runs.
 * Installed by [[io.embednorm.spark.EmbedNormExtensions]]; DataFrame functions in sessions without
 * the extension are checked by the expression itself when it is compiled or evaluated.
 */
class DeviceCheckRule(session: SparkSession) extends (LogicalPlan => Unit) {

  override def apply(plan: LogicalPlan): Unit = {
    val functions = mutable.SortedSet.empty[String]
    plan.foreachWithSubqueries { node =>
      node.expressions.foreach(_.foreach {
        case expression: EmbedNormExpression => functions += expression.prettyName
        case expression: LpNormalizeExpression => functions += expression.prettyName
        case expression: CausalConvExpression => functions += expression.prettyName
        case _ =>
      })
    }
    if (functions.nonEmpty) {
      DevicePolicy.check((key: String) => session.conf.getOption(key).orNull, functions.mkString(", "))
    }
  }
}
