package store

import (
	"fmt"
	"reflect"
	"sync"
)

// memdb's StringFieldIndex looks its field up by name with reflection on
// every insert, which showed up as a large share of Apply. These indexers
// resolve the field once per record type and read it by index after that.

// fieldPaths caches, per struct type and field name, the field's index path.
var fieldPaths sync.Map // fieldKey → []int

type fieldKey struct {
	t    reflect.Type
	name string
}

func fieldOf(obj any, name string) (reflect.Value, error) {
	v := reflect.Indirect(reflect.ValueOf(obj))
	key := fieldKey{v.Type(), name}
	path, ok := fieldPaths.Load(key)
	if !ok {
		f, found := v.Type().FieldByName(name)
		if !found {
			return reflect.Value{}, fmt.Errorf("store: %s has no field %s", v.Type(), name)
		}
		path, _ = fieldPaths.LoadOrStore(key, f.Index)
	}
	return v.FieldByIndex(path.([]int)), nil
}

// stringIndex indexes a string (or *string) field; empty values are not indexed.
type stringIndex struct{ field string }

func (x *stringIndex) FromObject(obj any) (bool, []byte, error) {
	fv, err := fieldOf(obj, x.field)
	if err != nil {
		return false, nil, err
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return false, nil, nil
		}
		fv = fv.Elem()
	}
	s := fv.String()
	if s == "" {
		return false, nil, nil
	}
	return true, append([]byte(s), 0), nil
}

func (x *stringIndex) FromArgs(args ...any) ([]byte, error) { return stringArg(args) }

// PrefixFromArgs lets compound and prefix queries use the index.
func (x *stringIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	b, err := stringArg(args)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

func stringArg(args []any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("store: index takes one argument, got %d", len(args))
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("store: index argument must be a string, not %T", args[0])
	}
	return append([]byte(s), 0), nil
}

// stringsIndex indexes every element of a []string field.
type stringsIndex struct{ field string }

func (x *stringsIndex) FromObject(obj any) (bool, [][]byte, error) {
	fv, err := fieldOf(obj, x.field)
	if err != nil {
		return false, nil, err
	}
	n := fv.Len()
	if n == 0 {
		return false, nil, nil
	}
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		if s := fv.Index(i).String(); s != "" {
			out = append(out, append([]byte(s), 0))
		}
	}
	return len(out) > 0, out, nil
}

func (x *stringsIndex) FromArgs(args ...any) ([]byte, error) { return stringArg(args) }

// idIndex and nameIndex read the record through its interface: no reflection at all.
type idIndex struct{}

func (idIndex) FromObject(obj any) (bool, []byte, error) {
	r, ok := obj.(Record)
	if !ok {
		return false, nil, fmt.Errorf("store: not a record: %T", obj)
	}
	return true, append([]byte(r.GetID()), 0), nil
}

func (idIndex) FromArgs(args ...any) ([]byte, error) { return stringArg(args) }

// PrefixFromArgs supports id prefix queries.
func (idIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	b, err := stringArg(args)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

type nameIndex struct{}

func (nameIndex) FromObject(obj any) (bool, []byte, error) {
	r, ok := obj.(Record)
	if !ok {
		return false, nil, fmt.Errorf("store: not a record: %T", obj)
	}
	return true, append([]byte(r.RecordName()), 0), nil
}

func (nameIndex) FromArgs(args ...any) ([]byte, error) { return stringArg(args) }
