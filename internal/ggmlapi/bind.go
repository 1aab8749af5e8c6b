//go:build darwin || freebsd || linux || netbsd || windows

package ggmlapi

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/ebitengine/purego"
)

// BindFields binds each func field of the struct *a points to, tagged
// sym:"name", to that symbol. The fields may be unexported, so they are
// reached through their addresses.
func BindFields(a any, sym func(string) uintptr) error {
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

// BindFunc binds the func variable *fp points to to the C function at p,
// an address ggml hands out (ggml_backend_reg_get_proc_address).
func BindFunc(fp any, p uintptr) { purego.RegisterFunc(fp, p) }

// NewCallback makes a C function pointer of a Go function (ggml_log_set's
// logger).
func NewCallback(fn any) uintptr { return purego.NewCallback(fn) }
