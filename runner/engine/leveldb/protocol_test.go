package leveldb

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
	"github.com/kvbench/kvbench-operator/runner/engine"
	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// The settle check's view of the LSM, parsed from a real "leveldb.sstables", agrees with LevelDB's
// own per-level file counts and with the table files on disk, and once CompactionIdle says idle no
// level is over its trigger.
func TestLevelSizesAndIdle(t *testing.T) {
	dir := t.TempDir()
	wb := resource.MustParse("64Ki")
	e, err := Open(engine.Config{Path: dir, Options: api.EngineOptions{WriteBufferSize: &wb}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	d := e.(*DB)
	keys := keygen.Keys{KeySize: 16, Num: 100000}
	vals := keygen.NewValues(1, 1, 100, 100)
	rnd := keygen.NewRand(1)
	k := keys.Make()
	for i := 0; i < 100000; i++ {
		if err := d.Put(keys.Put(k, rnd.Uint64n(100000)), vals.Next()); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for idle := false; !idle; time.Sleep(20 * time.Millisecond) {
		if idle, err = d.CompactionIdle(); err != nil || time.Now().After(deadline) {
			t.Fatalf("not idle after a minute (%v)", err)
		}
	}
	sst := d.db.PropertyValue("leveldb.sstables")
	if overTrigger(sst) {
		t.Errorf("idle, but a level is over its trigger:\n%s", sst)
	}
	files, bytes := levelSizes(sst)
	var total int64
	for l := range numLevels {
		n, _ := strconv.Atoi(d.db.PropertyValue("leveldb.num-files-at-level" + strconv.Itoa(l)))
		if files[l] != n {
			t.Errorf("level %d: parsed %d files, leveldb says %d", l, files[l], n)
		}
		total += bytes[l]
	}
	var onDisk int64
	ldbs, _ := filepath.Glob(filepath.Join(dir, "*.ldb"))
	for _, f := range ldbs {
		if st, err := os.Stat(f); err == nil {
			onDisk += st.Size()
		}
	}
	if total == 0 || total != onDisk || !strings.Contains(sst, "--- level 0 ---") {
		t.Errorf("parsed %d table bytes, %d on disk", total, onDisk)
	}
}
