package io.embednorm.spark.execution

import scala.jdk.CollectionConverters._

import io.embednorm.spark.internal.RowBatcher
import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{RowToColumnarTransition, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Batches the rows of a row child for [[EmbedNormProjectExec]], `spark.embednorm.batchRows` rows
 * at a time ([[io.embednorm.spark.internal.RowBatcher]]). Takes the place of Spark's
 * `RowToColumnarExec`, whose batch size is the in-memory cache's.
 */
case class RowBatchExec(child: SparkPlan, batchRows: Int) extends RowToColumnarTransition {

  override def nodeName: String = "EmbedNormRowBatch"

  override def output: Seq[Attribute] = child.output

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override def supportsColumnar: Boolean = true

  override def simpleString(maxFields: Int): String = s"$nodeName batchRows=$batchRows"

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of input rows"),
    "numOutputBatches" -> SQLMetrics.createMetric(sparkContext, "number of output batches"))

  override protected def doExecute(): RDD[InternalRow] =
    throw new IllegalStateException(s"$nodeName produces columnar batches only")

  override protected def doExecuteColumnar(): RDD[ColumnarBatch] = {
    val schema = child.schema
    val batchRows = this.batchRows
    val numInputRows = longMetric("numInputRows")
    val numOutputBatches = longMetric("numOutputBatches")
    child.execute().mapPartitions { rows =>
      val batcher = new RowBatcher(rows.asJava, schema, batchRows)
      TaskContext.get().addTaskCompletionListener[Unit](_ => batcher.close())
      batcher.asScala.map { batch =>
        numInputRows += batch.numRows()
        numOutputBatches += 1
        batch
      }
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): RowBatchExec =
    copy(child = newChild)
}
