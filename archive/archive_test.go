package archive

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestReadLog(t *testing.T) {
	long := strings.Repeat(`{"t":1,"opsPerSec":2},`, 20000) // a line far beyond bufio's 64 KiB buffer
	phase := `{"workload":"readrandom","threads":1,"ops":1,"seconds":1,"opsPerSec":1,"microsPerOp":1,"intervals":[` + long + `{"t":2,"opsPerSec":3}]}`
	log := "Engine:     rocksdb 7.8.3\n" +
		api.ResultPhaseLogPrefix + phase + "\n" +
		api.ResultLogPrefix + `{"schemaVersion":"kvbench.io/result/v1","engine":"leveldb"}` + "\n" +
		"readrandom   :       4.837 micros/op 206720 ops/sec\n" +
		" kvbench-result: an escaped line from db_bench\n" +
		strings.Repeat("x", 200<<10) + "\n" + // a long line that is neither
		api.ResultLogPrefix + `{"schemaVersion":"kvbench.io/result/v1","engine":"rocksdb","phases":[` + phase + `]}` + "\n" +
		"done"
	l, err := ReadLog(strings.NewReader(log), api.DefaultResultLimits, true)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Result
	if r == nil || r.Engine != api.EngineRocksDB || len(r.Phases) != 1 || len(r.Phases[0].Intervals) != 20001 || l.Over != nil || l.ResultErr != nil {
		t.Fatalf("got %+v, over %v, result error %v", r, l.Over, l.ResultErr)
	}
	if len(l.Phases) != 1 || len(l.Phases[0].Intervals) != 20001 {
		t.Fatalf("phase lines: %+v", l.Phases)
	}
	// The periodic read: summaries of the phase lines, no result.
	if l, err := ReadLog(strings.NewReader(log), api.DefaultResultLimits, false); err != nil || l.Result != nil || len(l.Phases) != 1 || l.Phases[0].Intervals != nil || l.Phases[0].OpsPerSec != 1 {
		t.Errorf("summaries: %+v, %v", l, err)
	}
	// Over a limit, what fits is kept and what was left out is said.
	small := api.DefaultResultLimits
	small.Lists = map[string]int{"intervals": 100}
	l, err = ReadLog(strings.NewReader(log), small, true)
	var le *LimitError
	if err != nil || l.Result == nil || len(l.Result.Phases[0].Intervals) != 100 || !errors.As(l.Over, &le) ||
		!strings.Contains(l.Over.Error(), "19901 intervals item(s) over the limit of 100") {
		t.Errorf("over the intervals limit: %v, %v", l.Over, err)
	}
	if l, err := ReadLog(strings.NewReader("no result here\n"), api.DefaultResultLimits, true); l.Result != nil || l.ResultErr != nil || err != nil {
		t.Errorf("no result line: %+v, %v", l, err)
	}
	if l, _ := ReadLog(strings.NewReader(api.ResultLogPrefix+`{"schemaVersion":"x"}`+"\n"), api.DefaultResultLimits, true); l.ResultErr == nil {
		t.Errorf("unknown schema accepted")
	}
	if l, _ := ReadLog(strings.NewReader(api.ResultLogPrefix+"{truncated\n"), api.DefaultResultLimits, true); l.ResultErr == nil {
		t.Errorf("broken JSON accepted")
	}
	// A log that cannot be read to its end is an error, not a shorter log.
	broken := io.MultiReader(strings.NewReader(api.ResultPhaseLogPrefix+`{"workload":"a"`), iotest.ErrReader(errors.New("connection reset")))
	if _, err := ReadLog(broken, api.DefaultResultLimits, true); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("a broken read: %v", err)
	}
}

func benchmark() *api.KVBenchmark {
	return &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", UID: "uid-1"}}
}

// realResult is a runner's full result from report/testdata (a real run: phases, intervals).
func realResult(t *testing.T) *api.Result {
	t.Helper()
	data, err := os.ReadFile("../report/testdata/baseline-rocksdb.result.json")
	if err != nil {
		t.Fatal(err)
	}
	var res api.Result
	if err := yaml.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) == 0 || len(res.Phases[0].Intervals) == 0 {
		t.Fatalf("fixture has no phases with intervals")
	}
	return &res
}

func TestConfigMapRoundTrip(t *testing.T) {
	res := realResult(t)
	cm, dropped, err := ConfigMap(benchmark(), "rocksdb", "kvb-b-rocksdb-1a2b3c", res)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != nil {
		t.Errorf("dropped %v from a small result", dropped)
	}
	if cm.Name != "kvb-b-rocksdb-1a2b3c-result" || cm.Namespace != "ns" {
		t.Errorf("name %s/%s", cm.Namespace, cm.Name)
	}
	if cm.Labels[api.LabelBenchmark] != "b" || cm.Labels[api.LabelRun] != "rocksdb" || cm.Labels[api.LabelManagedBy] != api.ManagerName {
		t.Errorf("labels %v", cm.Labels)
	}
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != "uid-1" || ref.Kind != "KVBenchmark" {
		t.Errorf("owner %+v: the archive must go with its benchmark", ref)
	}
	got, err := FromConfigMap(cm, benchmark(), Digest(cm))
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(got, res) {
		t.Errorf("round trip changed the result")
	}
}

func TestConfigMapDropsTheTimeSeriesWhenTooBig(t *testing.T) {
	res := realResult(t)
	// Long phases: random samples compress poorly, like real ones.
	rng := rand.New(rand.NewPCG(1, 2))
	perPhase := 80000/len(res.Phases) + 1
	for i := range res.Phases {
		res.Phases[i].Intervals = make([]api.IntervalSample, perPhase)
		for j := range res.Phases[i].Intervals {
			res.Phases[i].Intervals[j] = api.IntervalSample{OffsetSeconds: float64(j + 1), OpsPerSec: rng.Float64() * 1e6, P99Micros: rng.Float64() * 100}
		}
	}
	cm, dropped, err := ConfigMap(benchmark(), "rocksdb", "j", res)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 1 || dropped[0] != DroppedIntervals {
		t.Fatalf("dropped %v", dropped)
	}
	if n := len(cm.BinaryData[DataKey]); n > MaxCompressed {
		t.Errorf("%d bytes compressed, over %d", n, MaxCompressed)
	}
	got, err := FromConfigMap(cm, benchmark(), Digest(cm))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Phases) != len(res.Phases) || got.Phases[0].OpsPerSec != res.Phases[0].OpsPerSec || got.Phases[0].Intervals != nil {
		t.Errorf("want every phase without intervals, got %d phases", len(got.Phases))
	}
	if len(res.Phases[0].Intervals) != perPhase {
		t.Errorf("the caller's result was changed")
	}

	// Too big without intervals because of the engines' dumps: those go too, the typed stats stay.
	noise := make([]byte, 2<<20)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	lsm := int64(12345)
	res.Phases[0].EngineStats = &api.EngineStats{LSMBytes: &lsm}
	res.Phases[0].EngineDumps = []api.NamedText{{Name: "rocksdb.stats", Text: base64.StdEncoding.EncodeToString(noise)}}
	cm, dropped, err = ConfigMap(benchmark(), "rocksdb", "j", res)
	if err != nil || len(dropped) != 2 || dropped[1] != DroppedEngineDumps {
		t.Fatalf("dropped %v, err %v", dropped, err)
	}
	got, _ = FromConfigMap(cm, benchmark(), Digest(cm))
	if got.Phases[0].EngineDumps != nil || got.Phases[0].EngineStats == nil || *got.Phases[0].EngineStats.LSMBytes != lsm {
		t.Errorf("want the dumps gone and the engine stats kept: %+v", got.Phases[0])
	}
	if res.Phases[0].EngineDumps == nil {
		t.Errorf("the caller's result was changed")
	}

	// Too big because of the latency histograms (random: incompressible): those go last, the
	// percentiles stay.
	res.Phases[0].EngineDumps = nil
	per := len(noise) / len(res.Phases)
	for i := range res.Phases {
		res.Phases[i].LatencyHistogram = base64.StdEncoding.EncodeToString(noise[i*per : (i+1)*per])
	}
	cm, dropped, err = ConfigMap(benchmark(), "rocksdb", "j", res)
	if err != nil || len(dropped) != 3 || dropped[2] != DroppedLatencyHistograms {
		t.Fatalf("dropped %v, err %v", dropped, err)
	}
	got, _ = FromConfigMap(cm, benchmark(), Digest(cm))
	if got.Phases[0].LatencyHistogram != "" || got.Phases[0].OpsPerSec != res.Phases[0].OpsPerSec || res.Phases[0].LatencyHistogram == "" {
		t.Errorf("want the histograms gone from the archive (and only there): %+v", got.Phases[0].PhaseSummary)
	}

	// Too big even without all three: an error, not a ConfigMap the API server would refuse.
	for i := range res.Phases {
		res.Phases[i].LatencyHistogram = ""
	}
	res.Error = base64.StdEncoding.EncodeToString(noise)
	if _, _, err := ConfigMap(benchmark(), "rocksdb", "j", res); err == nil || !strings.Contains(err.Error(), "without its time series") {
		t.Errorf("got %v", err)
	}
}

func TestFromConfigMapErrors(t *testing.T) {
	for name, data := range map[string]map[string][]byte{
		"no key":      {},
		"not gzip":    {DataKey: []byte("{}")},
		"bad payload": {DataKey: gz(t, "not json")},
		"old schema":  {DataKey: gz(t, `{"schemaVersion":"kvbench.io/result/v0"}`)},
	} {
		cm := &corev1.ConfigMap{BinaryData: data}
		b := benchmark()
		cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(b, api.GroupVersion.WithKind("KVBenchmark"))}
		if _, err := FromConfigMap(cm, b, Digest(cm)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A ConfigMap under the archive's name is trusted only with this benchmark as its controller and
// the content digest recorded in status.
func TestFromConfigMapTrustsOnlyTheOperatorsArchive(t *testing.T) {
	b := benchmark()
	cm, _, err := ConfigMap(b, "rocksdb", "j", realResult(t))
	if err != nil {
		t.Fatal(err)
	}
	sha := Digest(cm)
	other := b.DeepCopy()
	other.UID = "uid-2"
	forged := cm.DeepCopy()
	forged.BinaryData[DataKey] = gz(t, `{"schemaVersion":"`+api.ResultSchemaVersion+`","engine":"rocksdb"}`)
	unowned := cm.DeepCopy()
	unowned.OwnerReferences = nil
	notController := cm.DeepCopy()
	notController.OwnerReferences[0].Controller = nil
	for name, tc := range map[string]struct {
		cm  *corev1.ConfigMap
		b   *api.KVBenchmark
		sha string
	}{
		"no owner (pre-created by a user)":       {unowned, b, sha},
		"owner but not controller":               {notController, b, sha},
		"another benchmark of the same name":     {cm, other, sha},
		"owner reference copied, content forged": {forged, b, sha},
		"no recorded digest":                     {cm, b, ""},
	} {
		_, err := FromConfigMap(tc.cm, tc.b, tc.sha)
		if !errors.Is(err, ErrNotOperatorWritten) {
			t.Errorf("%s: got %v, want ErrNotOperatorWritten", name, err)
		}
	}
	if _, err := FromConfigMap(cm, b, sha); err != nil {
		t.Errorf("the operator's own archive: %v", err)
	}
}

// A small archive that inflates beyond the byte limit is refused without reading it all: a
// whitespace bomb, and a string that never ends.
func TestDecompressIsBounded(t *testing.T) {
	for name, c := range map[string]struct {
		head string
		fill byte
		want string
	}{
		"whitespace": {"", ' ', "over the 32 MiB limit"},
		"string":     {`{"schemaVersion":"` + api.ResultSchemaVersion + `","engine":"`, 'a', "cut at the 32 MiB limit"},
	} {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write([]byte(c.head))
		fill := bytes.Repeat([]byte{c.fill}, 1<<20)
		for range api.DefaultResultLimits.Bytes>>20 + 8 {
			zw.Write(fill)
		}
		zw.Close()
		if buf.Len() > 200<<10 {
			t.Fatalf("%s: bomb is %d bytes, want a small one", name, buf.Len())
		}
		if _, err := Decompress(buf.Bytes()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	zw.Close()
	return buf.Bytes()
}

// BenchmarkDecode: the bounded decoder against plain json.Unmarshal on a real result (seed 002 at
// 10 GiB, 96 KB with engine dumps): go test ./archive -run '^$' -bench Decode.
func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile("../docs/reproductions/seed-002-10gi-evidence/seed-002-tuned-rocksdb.result.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bounded", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			var r api.Result
			if err := NewDecoder(api.DefaultResultLimits).Decode(bytes.NewReader(data), &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			var r api.Result
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadLogSummaries: the periodic read of a running runner's log (its phase lines'
// summaries) against decoding the same lines in full, and against json.Unmarshal of each line
// into a summary: go test ./archive -run '^$' -bench ReadLog.
func BenchmarkReadLogSummaries(b *testing.B) {
	data, err := os.ReadFile("../docs/reproductions/seed-002-10gi-evidence/seed-002-tuned-rocksdb.result.json")
	if err != nil {
		b.Fatal(err)
	}
	var res api.Result
	if err := json.Unmarshal(data, &res); err != nil {
		b.Fatal(err)
	}
	var log bytes.Buffer
	for i := range res.Phases {
		line, _ := json.Marshal(&res.Phases[i])
		log.WriteString(api.ResultPhaseLogPrefix + string(line) + "\n")
	}
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"summaries", func() error {
			_, err := ReadLog(bytes.NewReader(log.Bytes()), api.DefaultResultLimits, false)
			return err
		}},
		{"in-full", func() error {
			_, err := ReadLog(bytes.NewReader(log.Bytes()), api.DefaultResultLimits, true)
			return err
		}},
		{"json.Unmarshal-summaries", func() error {
			for _, line := range bytes.Split(log.Bytes(), []byte("\n")) {
				if rest, ok := bytes.CutPrefix(line, []byte(api.ResultPhaseLogPrefix)); ok {
					var p api.PhaseSummary
					if err := json.Unmarshal(rest, &p); err != nil {
						return err
					}
				}
			}
			return nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(log.Len()))
			for range b.N {
				if err := c.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// An encoded latency histogram is longer than other strings (1-4 KB where the string limit is
// 4 KiB) and useless when cut: it is kept whole up to its own limit and left out whole beyond it.
func TestLatencyHistogramKeptWholeOrLeftOut(t *testing.T) {
	hist := strings.Repeat("A", 6000) // over the 4 KiB string limit, under the histogram limit
	line := `{"schemaVersion":"kvbench.io/result/v2","engine":"rocksdb","phases":[{"workload":"readrandom","threads":1,"ops":1,"seconds":1,"opsPerSec":1,"microsPerOp":1,"latencyHistogram":"` + hist + `"}]}`
	var r api.Result
	d := NewDecoder(api.DefaultResultLimits)
	if err := d.Decode(strings.NewReader(line), &r); err != nil || d.Over() != nil || r.Phases[0].LatencyHistogram != hist {
		t.Fatalf("kept whole: got %d bytes, over %v, err %v", len(r.Phases[0].LatencyHistogram), d.Over(), err)
	}
	small := api.DefaultResultLimits
	small.Histogram = 5000
	r = api.Result{}
	d = NewDecoder(small)
	if err := d.Decode(strings.NewReader(line), &r); err != nil || r.Phases[0].LatencyHistogram != "" ||
		d.Over() == nil || !strings.Contains(d.Over().Error(), "latency histogram(s) over 5000 bytes") {
		t.Fatalf("left out: got %d bytes, over %v, err %v", len(r.Phases[0].LatencyHistogram), d.Over(), err)
	}
}

// What the previous release wrote still reads: testdata holds a result of the runner at 2aec5a4
// (before phases carried latencyHistogram) and the archive ConfigMap that release's operator made of
// it (digest as it recorded it in status). Both decode, the bounded decoder finds nothing over its
// limits, and the archive gives back the same result.
func TestReadsThePreviousReleasesResultAndArchive(t *testing.T) {
	line, err := os.ReadFile("testdata/result-2aec5a4.json")
	if err != nil {
		t.Fatal(err)
	}
	var res api.Result
	d := NewDecoder(api.DefaultResultLimits)
	if err := d.Decode(bytes.NewReader(line), &res); err != nil || d.Over() != nil {
		t.Fatalf("bounded decoder: %v, over %v", err, d.Over())
	}
	if res.SchemaVersion != api.ResultSchemaVersion || len(res.Phases) != 2 || res.Phases[1].Workload != "readrandom" ||
		res.Phases[1].OpsPerSec <= 0 || res.Phases[1].LatencyMicros == nil || res.Phases[1].LatencyHistogram != "" {
		t.Fatalf("decoded %+v", res)
	}
	data, err := os.ReadFile("testdata/archive-2aec5a4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	b := &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns", UID: "uid-old"}}
	got, err := FromConfigMap(&cm, b, "97cdaf486d800e35e36820194d8c0a0bac08503a9fe0c3f8c888732b0f105335")
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(got, &res) {
		t.Fatalf("the archive reads back as\n%+v\nnot\n%+v", got, &res)
	}
}
