package openblas

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// coreTypeEnv is OpenBLAS's variable that forces the kernels of one CPU
// type in its DYNAMIC_ARCH builds (Debian's and Ubuntu's).
const coreTypeEnv = "OPENBLAS_CORETYPE"

// coreType returns the OPENBLAS_CORETYPE to set before loading OpenBLAS on
// this machine, or "" when OpenBLAS's own detection is right. It reads
// /proc/cpuinfo on linux/amd64 only.
func coreType() string {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return ""
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	return coreTypeFor(string(b))
}

// coreTypeFor decides OPENBLAS_CORETYPE from the text of /proc/cpuinfo.
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
//
// Its AMD branch knows families up to 0x19 (Zen 4). Zen 5 (family 0x1A)
// and later get the generic Haswell kernels, half the speed of the
// AVX-512 ones there: on a 2-vCPU Zen 5 (Debian 12, OpenBLAS 0.3.21),
// cblas_sgemm 1024³ on 2 threads took 9.2 ms as detected and 4.4 ms with
// OPENBLAS_CORETYPE=SkylakeX, the same binary timed with the variable
// unset and set (OPENBLAS_VERBOSE=2 prints the core type chosen). Those
// CPUs get the same answer as the Intel ones above. Older Intel and AMD
// CPUs are detected correctly.
func coreTypeFor(cpuinfo string) string {
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
	f, errF := strconv.Atoi(family)
	m, errM := strconv.Atoi(model)
	if errF != nil || errM != nil {
		return ""
	}
	newIntel := vendor == "GenuineIntel" && f == 6 && m>>4 >= 0xB
	newAMD := vendor == "AuthenticAMD" && f >= 0x1A
	if !newIntel && !newAMD {
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
