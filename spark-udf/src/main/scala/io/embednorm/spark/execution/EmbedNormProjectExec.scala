package io.embednorm.spark.execution

import scala.jdk.CollectionConverters._

import io.embednorm.arrow.NormalizationMetrics
import io.embednorm.kernels.DeviceChoice
import io.embednorm.spark.internal.ColumnarNormalizer
import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, NamedExpression}
import org.apache.spark.sql.catalyst.util.truncatedString
import org.apache.spark.sql.execution.{OrderPreservingUnaryExecNode, PartitioningPreservingUnaryExecNode, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/**
 * The columnar operator: a projection whose embednorm functions run through the arrow-bridge
 * ([[io.embednorm.spark.internal.ColumnarNormalizer]]) on the GPU or the CPU engine, a batch at a
 * time, and whose other columns pass through as the child's column vectors. Planned by
 * [[EmbedNormColumnarRule]] for projections that [[ColumnarProjection]] accepts; takes batches from
 * a columnar child, or from [[RowBatchExec]] over a row child.
 *
 * An output batch stays valid until the next one is asked for; its Arrow memory belongs to the
 * task and is freed then, or when the task completes.
 */
case class EmbedNormProjectExec(
    projectList: Seq[NamedExpression],
    child: SparkPlan,
    columns: Seq[OutputColumn],
    device: DeviceChoice,
    concurrentGpuTasks: Int,
    explanation: Option[String])
    extends PartitioningPreservingUnaryExecNode
    with OrderPreservingUnaryExecNode {

  override def nodeName: String = "EmbedNormProject"

  override def output: Seq[Attribute] = projectList.map(_.toAttribute)

  override protected def outputExpressions: Seq[NamedExpression] = projectList

  override protected def orderingExpressions = child.outputOrdering

  override def supportsColumnar: Boolean = true

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "numBatches" -> SQLMetrics.createMetric(sparkContext, "number of output batches"),
    "gpuTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "GPU time (copies and kernels)"),
    "cpuTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "CPU engine time"),
    "normalizeTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "normalize wall time"),
    "bytesCopiedToArrow" -> SQLMetrics.createSizeMetric(sparkContext, "bytes copied to Arrow"),
    "bytesUploaded" -> SQLMetrics.createSizeMetric(sparkContext, "bytes copied to the GPU"),
    "bytesDownloaded" -> SQLMetrics.createSizeMetric(sparkContext, "bytes copied from the GPU"),
    "stagedBytes" -> SQLMetrics.createSizeMetric(sparkContext, "bytes staged for the GPU"),
    "cpuFallbackBatches" -> SQLMetrics.createMetric(sparkContext, "batches moved from GPU to CPU"))

  override def simpleString(maxFields: Int): String = {
    val projection = truncatedString(projectList, "[", ", ", "]", maxFields)
    s"$nodeName $projection" + explanation.map(text => s" ($text)").getOrElse("")
  }

  override def verboseStringWithOperatorId(): String = {
    val placement = explanation.map(text => s"\nPlacement: $text").getOrElse("")
    s"""
       |$formattedNodeName
       |Output [${output.size}]: ${output.mkString("[", ", ", "]")}
       |Input [${child.output.size}]: ${child.output.mkString("[", ", ", "]")}$placement
       |""".stripMargin
  }

  override protected def doExecute(): RDD[InternalRow] =
    throw new IllegalStateException(s"$nodeName produces columnar batches only")

  override protected def doExecuteColumnar(): RDD[ColumnarBatch] = {
    val outputColumns = columns
    val chains = outputColumns.collect { case Normalized(_, chain) => chain }
    val device = this.device
    val concurrentGpuTasks = this.concurrentGpuTasks
    val numOutputRows = longMetric("numOutputRows")
    val numBatches = longMetric("numBatches")
    val gpuTime = longMetric("gpuTime")
    val cpuTime = longMetric("cpuTime")
    val normalizeTime = longMetric("normalizeTime")
    val bytesCopiedToArrow = longMetric("bytesCopiedToArrow")
    val bytesUploaded = longMetric("bytesUploaded")
    val bytesDownloaded = longMetric("bytesDownloaded")
    val stagedBytes = longMetric("stagedBytes")
    val cpuFallbackBatches = longMetric("cpuFallbackBatches")
    child.executeColumnar().mapPartitions { batches =>
      val task = TaskContext.get()
      val normalizer = new ColumnarNormalizer(
        chains.asJava, device, concurrentGpuTasks, task)
      task.addTaskCompletionListener[Unit](_ => normalizer.close())
      batches.map { batch =>
        val batchMetrics = new NormalizationMetrics
        val result = normalizer.normalize(batch, batchMetrics)
        val vectors: Array[ColumnVector] = outputColumns.map {
          case PassThrough(ordinal) => batch.column(ordinal)
          case Normalized(index, _) => result.columns()(index)
        }.toArray
        numOutputRows += batch.numRows()
        numBatches += 1
        gpuTime += batchMetrics.uploadNanos() + batchMetrics.kernelNanos() +
          batchMetrics.downloadNanos()
        cpuTime += batchMetrics.cpuNanos()
        normalizeTime += batchMetrics.wallNanos()
        bytesCopiedToArrow += result.copiedBytes()
        bytesUploaded += batchMetrics.bytesUploaded()
        bytesDownloaded += batchMetrics.bytesDownloaded()
        stagedBytes += batchMetrics.stagedBytes()
        if (result.fellBack()) cpuFallbackBatches += 1
        new ColumnarBatch(vectors, batch.numRows())
      }
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): EmbedNormProjectExec =
    copy(child = newChild)
}
