// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Finds a function in the vDSO the kernel mapped into this process
 * (AT_SYSINFO_EHDR), by walking its dynamic symbol table. The vDSO is a
 * tiny, kernel-built ELF: one PT_LOAD, a PT_DYNAMIC with DT_HASH, DT_SYMTAB
 * and DT_STRTAB. Anything unexpected is -ENOSYS, never a crash on a
 * well-formed vDSO; a vDSO without the function is -ENOENT.
 */
#include <errno.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "internal.h"

void *threadlet_vdso_sym(const char *name)
{
	TL_KEEP_ERRNO;
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *sym = NULL;
	const Elf32_Word *hash = NULL;
	const char *str = NULL;
	uintptr_t bias = 0;
	int i, have_load = 0;

	if (!name)
		return (void *)(long)-EINVAL;
	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return (void *)(long)-ENOSYS;
	ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			bias = base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const ElfW(Dyn) *)(base + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return (void *)(long)-ENOSYS;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)(bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			str = (const char *)(bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = (const Elf32_Word *)(bias + dyn->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return (void *)(long)-ENOSYS;
	/* DT_HASH: nbucket, nchain; nchain is the number of symbols. */
	for (Elf32_Word n = 0; n < hash[1]; n++) {
		if (ELF64_ST_TYPE(sym[n].st_info) != STT_FUNC ||
		    sym[n].st_shndx == SHN_UNDEF)
			continue;
		if (!strcmp(str + sym[n].st_name, name))
			return (void *)(bias + sym[n].st_value);
	}
	return (void *)(long)-ENOENT;
}
