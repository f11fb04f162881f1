// SPDX-License-Identifier: MIT
/*
 * What the host offers the VM (vm_host.h): KVM that really works, and the
 * cached kernel to boot.
 */
#include "vm/vm_host.h"

#include <fcntl.h>
#include <gelf.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/self.h"
#include "lib/xalloc.h"

/* Hardware-assisted KVM needs VMX or SVM. Without them /dev/kvm can still
 * be a paravirtual KVM (kvm-pvm on this kind of cloud VM): KVM_CREATE_VM
 * succeeds, SeaBIOS runs, and then the stock kernel dies in its
 * decompressor with an emulation failure. So both must hold. */
static bool cpu_has_hw_virt(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[8192];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;

		if (strncmp(line, "flags", 5))
			continue;
		for (tok = strtok_r(line, " \t\n", &save); tok && !found;
		     tok = strtok_r(NULL, " \t\n", &save))
			found = !strcmp(tok, "vmx") || !strcmp(tok, "svm");
		break;
	}
	fclose(f);
	return found;
}

bool vm_host_kvm_usable(void)
{
	const char *force = getenv("CONCSCHED_VM_ACCEL");
	int kvm, vm;

	if (force && *force)
		return !strcmp(force, "kvm");
	if (!cpu_has_hw_virt())
		return false;
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return false;
	if (ioctl(kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION) {
		close(kvm);
		return false;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm >= 0)
		close(vm);
	close(kvm);
	return vm >= 0;
}

/* Xen's PHYS32_ENTRY note (include/xen/interface/elfnote.h): qemu boots an
 * uncompressed vmlinux carrying it through the PVH entry point. */
#define XEN_ELFNOTE_PHYS32_ENTRY 18

static bool elf_has_pvh_entry(const char *path)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *e;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && !found &&
		       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0)
			found = nh.n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh.n_namesz == 4 &&
				!memcmp((char *)data->d_buf + name_off, "Xen", 4);
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

char *vm_host_kernel_path(void)
{
	/* CONCSCHED_VM_KERNEL: another cached kernel (tools/vm-kernel.sh
	 * NAME: trixie-backports), as for `make test-kernels`. */
	const char *name = getenv("CONCSCHED_VM_KERNEL");
	char *dir = xasprintf("%s/kernel/%s", self_cache_dir(),
			      name && *name && !strchr(name, '/') ? name : "current");
	char *p = xasprintf("%s/vmlinux", dir);

	/* The uncompressed vmlinux (tools/gen-vmlinux.sh extracts it) boots
	 * through PVH, skipping firmware work and the bzImage's in-guest
	 * decompression: about 1 s less per boot under TCG (docs/vm.md). */
	if (elf_has_pvh_entry(p))
		goto out;
	free(p);
	p = xasprintf("%s/vmlinuz", dir);
	if (access(p, R_OK) == 0)
		goto out;
	log_err("no VM kernel cached in %s (run: sudo make deps)", dir);
	free(p);
	p = NULL;
out:
	free(dir);
	return p;
}
