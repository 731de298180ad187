package rocksdb

/*
#include <stdlib.h>
#include <string.h>
#include <rocksdb/c.h>

// One cgo crossing per Get, with the value pinned rather than copied (what db_bench's Get does);
// grocksdb's Get costs two crossings and a malloc+memcpy of the value.
static int kvb_get(rocksdb_t* db, const rocksdb_readoptions_t* ro, const char* k, size_t klen,
                   size_t* vlen, char** err) {
	rocksdb_pinnableslice_t* p = rocksdb_get_pinned(db, ro, k, klen, err);
	if (*err != NULL || p == NULL) return 0;
	rocksdb_pinnableslice_value(p, vlen);
	rocksdb_pinnableslice_destroy(p);
	return 1;
}

// db_bench's SeekRandom inner loop in one crossing: seek, check for an exact hit, then seek_nexts
// Next calls, summing key+value bytes.
static int kvb_seek_nexts(rocksdb_iterator_t* it, const char* k, size_t klen, int nexts, size_t* bytes) {
	size_t kl, vl;
	int found = 0;
	rocksdb_iter_seek(it, k, klen);
	if (rocksdb_iter_valid(it)) {
		const char* kk = rocksdb_iter_key(it, &kl);
		found = kl == klen && memcmp(kk, k, klen) == 0;
	}
	for (int j = 0; j < nexts && rocksdb_iter_valid(it); j++) {
		rocksdb_iter_key(it, &kl);
		rocksdb_iter_value(it, &vl);
		*bytes += kl + vl;
		rocksdb_iter_next(it);
	}
	return found;
}
*/
import "C"

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// grocksdb v1.7.15 keeps each handle's C pointer in an unexported first field named c and offers
// no accessor. The hot paths need the raw pointers to cut cgo crossings, so we read that field,
// after checking at init that the layout is the one we expect; otherwise we use grocksdb's calls.
var fastPathOK = firstFieldIsC(grocksdb.DB{}) && firstFieldIsC(grocksdb.ReadOptions{}) &&
	firstFieldIsC(grocksdb.Iterator{})

func firstFieldIsC(v any) bool {
	t := reflect.TypeOf(v)
	return t.NumField() > 0 && t.Field(0).Name == "c" && t.Field(0).Type.Kind() == reflect.Pointer &&
		t.Field(0).Offset == 0
}

func rawPtr[T any](p *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(p)) }

func fastGet(db *grocksdb.DB, ro *grocksdb.ReadOptions, key []byte) (bool, int, error) {
	var vlen C.size_t
	var cerr *C.char
	found := C.kvb_get((*C.rocksdb_t)(rawPtr(db)), (*C.rocksdb_readoptions_t)(rawPtr(ro)),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(key))), C.size_t(len(key)), &vlen, &cerr)
	if cerr != nil {
		msg := C.GoString(cerr)
		C.free(unsafe.Pointer(cerr))
		return false, 0, errors.New(msg)
	}
	return found != 0, int(vlen), nil
}

func fastSeekNexts(it *grocksdb.Iterator, key []byte, nexts int) (bool, int) {
	var bytes C.size_t
	found := C.kvb_seek_nexts((*C.rocksdb_iterator_t)(rawPtr(it)),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(key))), C.size_t(len(key)), C.int(nexts), &bytes)
	return found != 0, int(bytes)
}
