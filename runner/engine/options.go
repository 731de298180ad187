package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Bytes returns a quantity's value, or def when it is unset.
func Bytes(q *resource.Quantity, def int64) int64 {
	if q == nil {
		return def
	}
	return q.Value()
}

// Int returns *p, or def when it is unset.
func Int(p *int32, def int) int {
	if p == nil {
		return def
	}
	return int(*p)
}

// Bool returns *p, or false when it is unset.
func Bool(p *bool) bool { return p != nil && *p }

// CheckExisting fails with a clear message when MustExist is set and path holds no database
// (all three engines keep a CURRENT file).
func CheckExisting(cfg Config) error {
	if !cfg.MustExist {
		return nil
	}
	if _, err := os.Stat(filepath.Join(cfg.Path, "CURRENT")); err != nil {
		// Pebble's checkpoints name the current manifest in a marker file, with no CURRENT.
		if m, _ := filepath.Glob(filepath.Join(cfg.Path, "marker.manifest.*")); len(m) > 0 {
			return nil
		}
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no database at %s (use_existing_db needs one; load it first)", cfg.Path)
		}
		return err
	}
	return nil
}
