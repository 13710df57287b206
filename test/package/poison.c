/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stands in for a stack library (libibverbs.so.1, liburing.so.2, ...) in
 * the directory check-install.sh puts first on LD_LIBRARY_PATH: built under
 * that library's soname, it makes any load of it fail, as if the stack
 * were not installed: the dynamic loader finds none of the stack's symbols
 * or versions in it, and should a load get past that, its constructor
 * exits. A program that needs none of the stacks never loads it.
 */

#include <stdio.h>
#include <unistd.h>

#ifndef POISON_NAME
#error "build with -DPOISON_NAME=\"libfoo.so.N\""
#endif

__attribute__((constructor)) static void
poison_loaded(void)
{
	fprintf(stderr, "poison: %s was loaded, but it is not installed here\n",
		POISON_NAME);
	_exit(97);
}
