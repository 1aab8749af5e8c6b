package openblas

import "testing"

func cpuinfo(vendor string, family, model int, flags string) string {
	return "processor\t: 0\nvendor_id\t: " + vendor + "\ncpu family\t: " + itoa(family) + "\nmodel\t\t: " + itoa(model) +
		"\nmodel name\t: x\nflags\t\t: " + flags + "\n\nprocessor\t: 1\nvendor_id\t: " + vendor + "\n"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestCoreTypeFor(t *testing.T) {
	const avx512 = "fpu sse sse2 avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl"
	for _, tc := range []struct {
		info string
		want string
	}{
		{cpuinfo("GenuineIntel", 6, 207, avx512), "SkylakeX"},            // Emerald Rapids: 0.3.21 falls back to Prescott
		{cpuinfo("GenuineIntel", 6, 183, "sse avx avx2 fma"), "Haswell"}, // Raptor Lake
		{cpuinfo("GenuineIntel", 6, 143, avx512), ""},                    // Sapphire Rapids: known to 0.3.21
		{cpuinfo("GenuineIntel", 6, 85, avx512), ""},                     // Skylake-X
		{cpuinfo("AuthenticAMD", 25, 17, avx512), ""},                    // Zen 4
		{cpuinfo("AuthenticAMD", 26, 2, avx512), "SkylakeX"},             // Zen 5: 0.3.21 picks Haswell
		{cpuinfo("AuthenticAMD", 26, 68, "sse avx avx2 fma"), "Haswell"}, // a Zen 5 without AVX-512 exposed
		{cpuinfo("AuthenticAMD", 23, 49, "sse avx avx2 fma"), ""},        // Zen 2
		{cpuinfo("GenuineIntel", 6, 207, "sse sse2"), ""},                // nothing better than Prescott
		{"", ""},
	} {
		if got := coreTypeFor(tc.info); got != tc.want {
			t.Errorf("coreTypeFor(%q) = %q, want %q", tc.info[:min(len(tc.info), 60)], got, tc.want)
		}
	}
}
