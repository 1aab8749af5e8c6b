package blas

import (
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
)

// CoreTypeEnv is OpenBLAS's variable that forces the kernels of one CPU
// type in its DYNAMIC_ARCH builds (Debian's and Ubuntu's).
const CoreTypeEnv = "OPENBLAS_CORETYPE"

// CoreType returns the OPENBLAS_CORETYPE to set before loading OpenBLAS on
// this machine, or "" when OpenBLAS's own detection is right. It reads
// /proc/cpuinfo on linux/amd64 only.
func CoreType() string {
	if goruntime.GOOS != "linux" || goruntime.GOARCH != "amd64" {
		return ""
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	return CoreTypeFor(string(b))
}

// CoreTypeFor decides OPENBLAS_CORETYPE from the text of /proc/cpuinfo.
//
// OpenBLAS 0.3.21 (Debian 12's) picks kernels in get_coretype
// (driver/others/dynamic.c) by Intel family 6 extended model, and its
// switch has no case for extended models 0xB and up: Raptor Lake (0xB7,
// 0xBA, 0xBF), Lunar Lake (0xBD), Arrow Lake (0xC5, 0xC6), Emerald Rapids
// (0xCF), … fall through into the Pentium 4 case and get Prescott's SSE3
// kernels, about 5x slower than the AVX-512 ones on Emerald Rapids (see
// the project's cpu-performance notes). For those CPUs this returns the
// core type their instruction set supports: SkylakeX with AVX-512
// (F, CD, BW, DQ, VL), Haswell with AVX2 and FMA, Sandybridge with AVX.
// Other CPUs, including every AMD one, are detected correctly.
func CoreTypeFor(cpuinfo string) string {
	var vendor, family, model string
	flags := map[string]bool{}
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "vendor_id":
			vendor = v
		case "cpu family":
			family = v
		case "model":
			model = v
		case "flags":
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
		}
	}
	m, err := strconv.Atoi(model)
	if vendor != "GenuineIntel" || family != "6" || err != nil || m>>4 < 0xB {
		return ""
	}
	switch {
	case flags["avx512f"] && flags["avx512cd"] && flags["avx512bw"] && flags["avx512dq"] && flags["avx512vl"]:
		return "SkylakeX"
	case flags["avx2"] && flags["fma"]:
		return "Haswell"
	case flags["avx"]:
		return "Sandybridge"
	}
	return ""
}
