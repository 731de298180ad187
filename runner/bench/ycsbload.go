package bench

import (
	"slices"

	"github.com/kvbench/kvbench-operator/runner/keygen"
)

// ycsbSortBudget is how many key numbers a YCSB bulk load holds at once (8 bytes each): 64 MiB,
// whatever the dataset's size.
var ycsbSortBudget int64 = 8 << 20

// ycsbRecords is the dataset's pool of YCSB records.
func (e *env) ycsbRecords() *keygen.YCSBRecords {
	y := e.ds.YCSB
	return keygen.NewYCSBRecords(y.fieldCount, y.fieldLength, e.ds.Ratio, e.ds.Seed^0x7c5b)
}

// ycsbSorted hands out the dataset's YCSB records in key order. Hashed keys are in no order by record
// number, and sorting all of them would hold 8 bytes per record, so the keys are split into groups
// that are in key order (keygen.YCSBKeyGroup: by their first digits), counted in one pass; each
// worker takes a contiguous run of groups and, a few groups at a time within its share of
// ycsbSortBudget, collects their numbers in a pass over all records, sorts them and writes them.
// A number two records share (a hash collision) is written once, as YCSB's second insert would
// overwrite the first.
func (e *env) ycsbSorted() sortedSource {
	y := e.ds.YCSB
	n := e.ds.Num
	number := func(i int64) int64 {
		if y.ordered {
			return i
		}
		return keygen.FNVHash64(i)
	}
	var counts [keygen.YCSBKeyGroups]int64
	for i := range n {
		counts[keygen.YCSBKeyGroup(number(i), y.zeroPadding)]++
	}
	recs := e.ycsbRecords()
	return func(t *thread, workers int, add func(key, val []byte) error) error {
		// This worker's groups: those whose records start in its share of the dataset.
		from, to, seen := -1, 0, int64(0)
		for g, c := range counts {
			if seen >= n*int64(t.id)/int64(workers) && from < 0 {
				from = g
			}
			if seen < n*int64(t.id+1)/int64(workers) {
				to = g + 1
			}
			seen += c
		}
		if from < 0 {
			return nil
		}
		budget := max(1, ycsbSortBudget/int64(workers))
		var nums []int64
		rec := uint64(t.id) * 7919
		for lo := from; lo < to && !t.stopped(); {
			hi, size := lo+1, counts[lo]
			for hi < to && size+counts[hi] <= budget {
				size += counts[hi]
				hi++
			}
			nums = nums[:0]
			for i := range n {
				x := number(i)
				if g := keygen.YCSBKeyGroup(x, y.zeroPadding); g >= lo && g < hi {
					nums = append(nums, x)
				}
			}
			slices.SortFunc(nums, func(a, b int64) int { return keygen.CompareYCSBKeys(a, b, y.zeroPadding) })
			nums = slices.Compact(nums)
			for _, x := range nums {
				if t.stopped() {
					return nil
				}
				t.key = keygen.AppendYCSBNumber(t.key[:0], x, y.zeroPadding)
				if err := add(t.key, recs.Record(rec)); err != nil {
					return err
				}
				rec++
			}
			lo = hi
		}
		return nil
	}
}
