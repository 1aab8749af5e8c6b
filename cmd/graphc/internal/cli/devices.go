package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/ggml"
)

// cmdDevices lists graphc's backend kinds, whether this machine can run
// each, and every device ggml finds, like llama-cli --list-devices.
// Missing ggml libraries are not an error: the list says so and how to
// get them.
func cmdDevices(e *env, args []string) error {
	fs := newFlags(e, "devices")
	if _, err := parseFlags(fs, args, 0, 0); err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "graphc backends:")
	for _, k := range backend.Kinds {
		state := "available"
		if k.Name == "cpu" {
			// The registry links no kernels; the command line does.
			state += fmt.Sprintf(": kernels at level %s (this machine has %s; $%s picks one)", cpu.ISA(), strings.Join(cpu.ISAs(), ", "), cpu.ISAEnv)
		}
		if k.Available != nil {
			if ok, why := k.Available(); !ok {
				state = "unavailable: " + why
				if i := strings.IndexByte(why, ';'); i > 0 {
					state = "unavailable: " + why[:i] // the rest, how to fix it, follows once below
				}
			}
		}
		fmt.Fprintf(w, "  %s\t%s\n", k.Pattern(), state)
	}
	w.Flush()
	fmt.Fprintln(e.stdout)
	libs, err := ggml.Load()
	if err != nil {
		fmt.Fprintf(e.stdout, "ggml devices: none (%v)\n", err)
		return nil
	}
	v, commit, _ := ggml.Version()
	devs, err := ggml.Devices()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "ggml %s (commit %s) from %s:\n", v, commit, libs.Dir)
	w = tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
	for _, d := range devs {
		mem := "device memory"
		if d.HostMemory {
			mem = "host memory"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%d MiB free of %d MiB\t%s\n", d.Name, d.Type, d.Description, d.Free>>20, d.Total>>20, mem)
	}
	return w.Flush()
}
