package io.embednorm.spark.execution

import scala.collection.immutable.ListMap
import scala.jdk.CollectionConverters._

import io.embednorm.arrow.NormalizationMetrics
import io.embednorm.engine.DeviceChoice
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
 * The columnar operator: a projection whose embednorm functions (`causal_conv` included) run
 * through the arrow-bridge ([[io.embednorm.spark.internal.ColumnarNormalizer]]) on the GPU or the
 * CPU engine, a batch at a time, and whose other columns pass through as the child's column
 * vectors. Planned by [[EmbedNormColumnarRule]] for projections that [[ColumnarProjection]]
 * accepts; takes batches from a columnar child, or from [[RowBatchExec]] over a row child.
 *
 * An output batch stays valid until the next one is asked for: its normalized columns are on-heap
 * Spark vectors that the task reuses for every batch (Spark reads them as fast as the scan's), as
 * it reuses its Arrow memory (freed when the task completes).
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

  /**
   * Counts, bytes, and the operator's time per batch split into parts that do not overlap:
   * allocating and freeing Arrow memory, copying Spark's vectors into Arrow, the normalization's
   * wall time (on a GPU: pinning, waiting for a GPU slot, the copy-kernel-copy pipeline and
   * validity; of which `pinningTime` and the overlapping GPU stage times are shown too), and
   * copying the results out of Arrow into the output batch. `operatorTime` is the whole; what it
   * holds beyond the parts is looking up the normalizer (creating it, on an executor's first
   * batch) and bookkeeping. In this order in listings.
   */
  override lazy val metrics: Map[String, SQLMetric] = ListMap(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "numBatches" -> SQLMetrics.createMetric(sparkContext, "number of output batches"),
    "operatorTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "operator time"),
    "allocationTime" ->
      SQLMetrics.createNanoTimingMetric(sparkContext, "Arrow allocate and free time"),
    "copyToArrowTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "copy to Arrow time"),
    "normalizeTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "normalize wall time"),
    "pinningTime" ->
      SQLMetrics.createNanoTimingMetric(sparkContext, "host memory registration time"),
    "gpuTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "GPU time (copies and kernels)"),
    "uploadTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "GPU upload time"),
    "kernelTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "GPU kernel time"),
    "downloadTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "GPU download time"),
    "cpuTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "CPU engine time"),
    "outputTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "output batch time"),
    "numGpuChunks" -> SQLMetrics.createMetric(sparkContext, "number of GPU chunks"),
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
    val convolutions = outputColumns.collect { case Convolved(_, convolution) => convolution }
    val device = this.device
    val concurrentGpuTasks = this.concurrentGpuTasks
    val metrics = this.metrics
    child.executeColumnar().mapPartitions { batches =>
      val task = TaskContext.get()
      val normalizer = new ColumnarNormalizer(
        chains.asJava, convolutions.asJava, device, concurrentGpuTasks, task)
      task.addTaskCompletionListener[Unit](_ => normalizer.close())
      batches.map { batch =>
        val started = System.nanoTime()
        val batchMetrics = new NormalizationMetrics
        val result = normalizer.normalize(batch, batchMetrics)
        val vectors: Array[ColumnVector] = outputColumns.map {
          case PassThrough(ordinal) => batch.column(ordinal)
          case Normalized(index, _) => result.columns()(index)
          case Convolved(index, _) => result.columns()(chains.size + index)
        }.toArray
        val output = new ColumnarBatch(vectors, batch.numRows())
        EmbedNormProjectExec.addBatch(metrics, batch.numRows(), result, batchMetrics)
        metrics("operatorTime") += System.nanoTime() - started
        output
      }
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): EmbedNormProjectExec =
    copy(child = newChild)
}

object EmbedNormProjectExec {

  /** Adds what one batch did to the operator's metrics. */
  private def addBatch(
      metrics: Map[String, SQLMetric],
      rows: Int,
      result: ColumnarNormalizer.BatchResult,
      normalization: NormalizationMetrics): Unit = {
    val times = result.times()
    metrics("numOutputRows") += rows
    metrics("numBatches") += 1
    metrics("allocationTime") += times.allocationNanos()
    metrics("copyToArrowTime") += times.copyNanos()
    metrics("normalizeTime") += normalization.wallNanos()
    metrics("outputTime") += times.outputNanos()
    metrics("pinningTime") += normalization.registrationNanos()
    metrics("gpuTime") +=
      normalization.uploadNanos() + normalization.kernelNanos() + normalization.downloadNanos()
    metrics("uploadTime") += normalization.uploadNanos()
    metrics("kernelTime") += normalization.kernelNanos()
    metrics("downloadTime") += normalization.downloadNanos()
    metrics("cpuTime") += normalization.cpuNanos()
    metrics("numGpuChunks") += normalization.chunks()
    metrics("bytesCopiedToArrow") += result.copiedBytes()
    metrics("bytesUploaded") += normalization.bytesUploaded()
    metrics("bytesDownloaded") += normalization.bytesDownloaded()
    metrics("stagedBytes") += normalization.stagedBytes()
    if (result.fellBack()) metrics("cpuFallbackBatches") += 1
  }
}
