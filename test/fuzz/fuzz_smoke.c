/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs the libFuzzer target on pseudo-random inputs with any compiler, so the
 * target's checks run in every build; coverage-guided fuzzing needs clang
 * (test/fuzz/run.sh).
 */

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(void)
{
	static uint8_t in[6 + 8 * 128];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	size_t i;
	int k;

	for (k = 0; k < 200000; k++) {
		for (i = 0; i < sizeof(in); i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			/* Mostly plausible op_own bytes: owner and opcode vary. */
			in[i] = (uint8_t)s;
		}
		LLVMFuzzerTestOneInput(in, 6 + (size_t)(s % (sizeof(in) - 6)));
	}
	return 0;
}
