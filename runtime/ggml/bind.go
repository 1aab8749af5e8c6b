//go:build darwin || freebsd || linux || netbsd || windows

package ggml

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/ebitengine/purego"
)

// bindFields binds each func field of *a tagged sym:"name" to that symbol.
// The fields are unexported, so they are reached through their addresses.
func bindFields(a *api, sym func(string) uintptr) error {
	v := reflect.ValueOf(a).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("sym")
		if name == "" {
			continue
		}
		p := sym(name)
		if p == 0 {
			return fmt.Errorf("symbol %s missing", name)
		}
		fp := reflect.NewAt(f.Type, unsafe.Pointer(v.Field(i).UnsafeAddr())).Interface()
		purego.RegisterFunc(fp, p)
	}
	return nil
}
