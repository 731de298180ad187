package io.kvbench.rocksjava;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The result schema kvbench.io/result/v2 (api/v1alpha1 Result, PhaseResult, Summary, ...): only the fields
 * this runner fills, with the Go JSON names. runner/java/java_test.go decodes what this writes with the Go
 * types, unknown fields refused, so a name that drifts fails there.
 */
public final class Model {
  private Model() {}

  public static final String SCHEMA = "kvbench.io/result/v2";
  public static final String RESULT_PREFIX = "kvbench-result: ";
  public static final String PHASE_PREFIX = "kvbench-phase: ";

  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Result {
    public String schemaVersion = SCHEMA;
    public String engine = "rocksjava";
    public String engineVersion;
    public Dataset dataset = new Dataset();
    public String startTime;
    public String endTime;
    public Phase load;
    public List<Phase> phases = new ArrayList<>();
    public String error;
    public Provenance provenance;
    public EngineStats engineTotals;
  }

  public static final class Dataset {
    public long num;
    public int keySize;
    public double valueSizeAvg;
    public long bytes;
  }

  /** PhaseSummary's fields and PhaseResult's, flattened as Go's inline embedding writes them. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class PhaseSummary {
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public int index;
    public String workload;
    public int threads;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public int iteration;
    public long ops;
    public double seconds;
    public double opsPerSec;
    public double microsPerOp;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public double mbPerSec;
    public Long found;
    public Percentiles latencyMicros;
    public Double writeRate;
    public Double targetOpsPerSec;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public boolean targetMissed;
    public Double serviceP99Micros;
    public List<Operation> operations;
  }

  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Phase extends PhaseSummary {
    public List<Interval> intervals;
    public Usage usage;
    public EngineStats engineStats;
    public List<NamedText> engineDumps;
    public Protocol protocol;
    public EngineOps engineOps;
    public String latencyHistogram;

    PhaseSummary summary() {
      PhaseSummary s = new PhaseSummary();
      s.index = index;
      s.workload = workload;
      s.threads = threads;
      s.iteration = iteration;
      s.ops = ops;
      s.seconds = seconds;
      s.opsPerSec = opsPerSec;
      s.microsPerOp = microsPerOp;
      s.mbPerSec = mbPerSec;
      s.found = found;
      s.latencyMicros = latencyMicros;
      s.writeRate = writeRate;
      s.targetOpsPerSec = targetOpsPerSec;
      s.targetMissed = targetMissed;
      s.serviceP99Micros = serviceP99Micros;
      s.operations = operations;
      return s;
    }
  }

  public static final class Percentiles {
    public double mean;
    public double p50;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public double p75;
    public double p99;
    public double p999;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public double p9999;
    public double max;
  }

  @JsonInclude(JsonInclude.Include.NON_NULL)
  /** A ycsb phase's engine calls (api.EngineOps). */
  public static final class EngineOps {
    public long gets;
    public long puts;
    public long seeks;
    public long nexts;
  }

  public static final class Operation {
    public String name;
    public long ops;
    public double opsPerSec;
    public Percentiles latencyMicros;
  }

  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public static final class Interval {
    @JsonProperty("t")
    public double offsetSeconds;
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public double opsPerSec;
    public double p99Micros;
  }

  public static final class Usage {
    public double cpuSeconds;
    public double userCPUSeconds;
    public double systemCPUSeconds;
    public long maxRSSBytes;
    public double cpuPercent;
    public long readBytes;
    public long writeBytes;
    public long majorFaults;
  }

  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Protocol {
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public long warmupOps;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public double warmupSeconds;
    public Double settleSeconds;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public boolean settleTimedOut;
    public Double resetSeconds;
    public Double targetOpsPerSec;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public boolean targetMissed;
    public Percentiles serviceLatencyMicros;
  }

  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class EngineStats {
    public Long userBytesWritten;
    public Long flushBytesWritten;
    public Long compactionBytesRead;
    public Long compactionBytesWritten;
    public Double writeAmplification;
    public Double compactionSeconds;
    public Double compactionCPUSeconds;
    public Long flushCount;
    public Long compactionCount;
    public Double stallSeconds;
    public Long stallCount;
    public Long lsmBytes;
    public Long blobBytes;
    public Long pendingCompactionBytes;
    public Long memtableBytes;
    public Long blockCacheHits;
    public Long blockCacheMisses;
    public Long bloomUseful;
    public Long bloomChecked;
    public List<Level> levels;
    public List<String> unavailable;
  }

  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Level {
    public int level;
    public long files;
    public long bytes;
    public Long compactionBytesRead;
    public Long compactionBytesWritten;
  }

  public static final class NamedText {
    public String name;
    public String text;

    public NamedText() {}

    public NamedText(String name, String text) {
      this.name = name;
      this.text = text;
    }
  }

  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Provenance {
    public String runnerVersion;
    public Map<String, String> libraries;
    public long seed;
    public NamedText optionsFile;
    public List<OptionOverride> optionsOverrides;
    public Node node;
  }

  /** api.OptionOverride: a key of the user's OPTIONS file that did not take effect as written. */
  public static final class OptionOverride {
    public String key;
    public String file;
    public String effective;
    public String by;

    public OptionOverride() {}

    public OptionOverride(String key, String file, String effective, String by) {
      this.key = key;
      this.file = file;
      this.effective = effective;
      this.by = by;
    }
  }

  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public static final class Node {
    public String nodeName;
    public String cpuModel;
    public int cpus;
    public String kernel;
    public long memoryBytes;
    public String dataFilesystem;
  }

  /** api.Summary: the termination message, at most 4096 bytes. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Summary {
    public String schemaVersion = SCHEMA;
    public String engine;
    public String engineVersion;
    public Dataset dataset;
    public PhaseSummary load;
    public List<PhaseSummary> phases;
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public int truncated;
    public String error;
    public ProvenanceSummary provenance;
  }

  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public static final class ProvenanceSummary {
    public long seed;
    public List<String> optionsOverrides;
  }
}
