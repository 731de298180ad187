package archive

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/controllers/render"
)

func TestFromLog(t *testing.T) {
	long := strings.Repeat(`{"t":1,"opsPerSec":2},`, 20000) // a line far beyond bufio's default 64 KiB
	log := "Engine:     rocksdb 7.8.3\n" +
		api.ResultLogPrefix + `{"schemaVersion":"kvbench.io/result/v1","engine":"leveldb"}` + "\n" +
		"readrandom   :       4.837 micros/op 206720 ops/sec\n" +
		" kvbench-result: an escaped line from db_bench\n" +
		api.ResultLogPrefix + `{"schemaVersion":"kvbench.io/result/v1","engine":"rocksdb","phases":[{"workload":"readrandom","threads":1,"ops":1,"seconds":1,"opsPerSec":1,"microsPerOp":1,"intervals":[` + long + `{"t":2,"opsPerSec":3}]}]}` + "\n" +
		"done\n"
	r, err := FromLog(strings.NewReader(log), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil || r.Engine != api.EngineRocksDB || len(r.Phases) != 1 || len(r.Phases[0].Intervals) != 20001 {
		t.Fatalf("got %+v", r)
	}
	if _, err := FromLog(strings.NewReader(log), 64<<10); err == nil || !strings.Contains(err.Error(), "longer than the limit") {
		t.Errorf("a line over the limit: %v", err)
	}
	if r, err := FromLog(strings.NewReader("no result here\n"), 1<<20); r != nil || err != nil {
		t.Errorf("no result line: %v, %v", r, err)
	}
	if _, err := FromLog(strings.NewReader(api.ResultLogPrefix+`{"schemaVersion":"x"}`+"\n"), 1<<20); err == nil {
		t.Errorf("unknown schema accepted")
	}
	if _, err := FromLog(strings.NewReader(api.ResultLogPrefix+"{truncated\n"), 1<<20); err == nil {
		t.Errorf("broken JSON accepted")
	}
}

func benchmark() *api.KVBenchmark {
	return &api.KVBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", UID: "uid-1"}}
}

// realResult is a runner's full result from report/testdata (a real run: phases, intervals).
func realResult(t *testing.T) *api.Result {
	t.Helper()
	data, err := os.ReadFile("../../report/testdata/baseline-rocksdb.result.json")
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
	if cm.Labels[render.LabelBenchmark] != "b" || cm.Labels[render.LabelRun] != "rocksdb" || cm.Labels[render.LabelManagedBy] != render.ManagerName {
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

	// Too big even without both: an error, not a ConfigMap the API server would refuse.
	res.Phases[0].EngineDumps = nil
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

// A small archive that inflates beyond MaxDecompressed is refused without reading it all.
func TestDecompressIsBounded(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range MaxDecompressed>>20 + 8 {
		zw.Write(zeros)
	}
	zw.Close()
	if buf.Len() > 100<<10 {
		t.Fatalf("bomb is %d bytes, want a small one", buf.Len())
	}
	_, err := Decompress(buf.Bytes())
	if err == nil || !strings.Contains(err.Error(), "decompressed result exceeds 32 MiB") {
		t.Errorf("got %v", err)
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
