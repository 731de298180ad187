package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/kvbench/kvbench-operator/api/v1alpha1"
)

func TestOptionsOverrides(t *testing.T) {
	user := `# comment
[DBOptions]
  max_open_files=100   # trailing comment
  max_background_jobs=4
[CFOptions   "default"]
  write_buffer_size=64M
  num_levels=7
[Level "3"]
  block_size=4096
`
	effective := `[DBOptions]
  max_open_files=-1
  max_background_jobs=4
[CFOptions "default"]
  write_buffer_size=67108864
  num_levels=7
`
	reps := []Replacement{
		{By: "engines[].options.maxOpenFiles", Keys: []string{"DBOptions/max_open_files"}},
		{By: "engines[].options.maxBackgroundJobs", Keys: []string{"DBOptions/max_background_jobs"}},
		{By: "engines[].options.writeBufferSize", Keys: []string{`CFOptions "default"/write_buffer_size`}},
		{By: "engines[].options.blockSize", Keys: []string{`Level "*"/block_size`}},
	}
	want := []api.OptionOverride{
		{Key: "DBOptions/max_open_files", File: "100", Effective: "-1", By: "engines[].options.maxOpenFiles"},
		// max_background_jobs: set to the file's own value, no conflict; num_levels: not replaced.
		{Key: `CFOptions "default"/write_buffer_size`, File: "64M", Effective: "67108864", By: "engines[].options.writeBufferSize"},
		{Key: `Level "3"/block_size`, File: "4096", Effective: "(not written)", By: "engines[].options.blockSize"},
	}
	if diff := cmp.Diff(want, OptionsOverrides(user, effective, reps)); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
}
