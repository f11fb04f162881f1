// SPDX-License-Identifier: MIT
#include "kernel/sync.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/launcher.h"
#include "kernel/links.h"
#include "kernel/maps.h"
#include "kernel/symbolize.h"
#include "sync.skel.h"
#include "kernel/target.h"
#include "lib/array_size.h"
#include "lib/log.h"
#include "lib/xalloc.h"

/* The pthread API we probe (glibc names), exit() and stdio output.
 * "required" functions exist in every glibc with threads; the rest are
 * newer (clock*) or optional and may be absent, notably from static
 * binaries that do not link them. */
const struct sync_fn_desc sync_fns[] = {
	{ CS_FN_MUTEX_LOCK, "pthread_mutex_lock", true, true },
	{ CS_FN_MUTEX_TRYLOCK, "pthread_mutex_trylock", true, false },
	{ CS_FN_MUTEX_TIMEDLOCK, "pthread_mutex_timedlock", true, false },
	{ CS_FN_MUTEX_CLOCKLOCK, "pthread_mutex_clocklock", true, false },
	{ CS_FN_MUTEX_UNLOCK, "pthread_mutex_unlock", false, true },
	{ CS_FN_RW_RDLOCK, "pthread_rwlock_rdlock", true, false },
	{ CS_FN_RW_TRYRDLOCK, "pthread_rwlock_tryrdlock", true, false },
	{ CS_FN_RW_TIMEDRDLOCK, "pthread_rwlock_timedrdlock", true, false },
	{ CS_FN_RW_CLOCKRDLOCK, "pthread_rwlock_clockrdlock", true, false },
	{ CS_FN_RW_WRLOCK, "pthread_rwlock_wrlock", true, false },
	{ CS_FN_RW_TRYWRLOCK, "pthread_rwlock_trywrlock", true, false },
	{ CS_FN_RW_TIMEDWRLOCK, "pthread_rwlock_timedwrlock", true, false },
	{ CS_FN_RW_CLOCKWRLOCK, "pthread_rwlock_clockwrlock", true, false },
	{ CS_FN_RW_UNLOCK, "pthread_rwlock_unlock", false, false },
	{ CS_FN_SPIN_LOCK, "pthread_spin_lock", true, false },
	{ CS_FN_SPIN_TRYLOCK, "pthread_spin_trylock", true, false },
	{ CS_FN_SPIN_UNLOCK, "pthread_spin_unlock", false, false },
	{ CS_FN_COND_WAIT, "pthread_cond_wait", true, false },
	{ CS_FN_COND_TIMEDWAIT, "pthread_cond_timedwait", true, false },
	{ CS_FN_COND_CLOCKWAIT, "pthread_cond_clockwait", true, false },
	{ CS_FN_COND_SIGNAL, "pthread_cond_signal", false, false },
	{ CS_FN_COND_BROADCAST, "pthread_cond_broadcast", false, false },
	{ CS_FN_SEM_WAIT, "sem_wait", true, false },
	{ CS_FN_SEM_TRYWAIT, "sem_trywait", true, false },
	{ CS_FN_SEM_TIMEDWAIT, "sem_timedwait", true, false },
	{ CS_FN_SEM_CLOCKWAIT, "sem_clockwait", true, false },
	{ CS_FN_SEM_POST, "sem_post", false, false },
	{ CS_FN_BARRIER_WAIT, "pthread_barrier_wait", false, false },
	{ CS_FN_CREATE, "pthread_create", false, false },
	{ CS_FN_JOIN, "pthread_join", true, false },
	{ CS_FN_TRYJOIN, "pthread_tryjoin_np", true, false },
	{ CS_FN_TIMEDJOIN, "pthread_timedjoin_np", true, false },
	{ CS_FN_CLOCKJOIN, "pthread_clockjoin_np", true, false },
	{ CS_FN_EXIT, "pthread_exit", false, false },
	{ CS_FN_SPIN_LOCK_ACQUIRED, "pthread_spin_lock", false, false },
	{ CS_FN_ONCE, "pthread_once", true, false },
	{ CS_FN_PROC_EXIT, "exit", false, false },
	/* stdio output: glibc locks the stream inside (CS_OP_STDIO). The
	 * _chk variants are what -D_FORTIFY_SOURCE compiles printf and
	 * fprintf to; aliases (_IO_puts, _IO_fputs, ...) share an address
	 * with these and are probed once. */
	{ CS_FN_PRINTF, "printf", false, false },
	{ CS_FN_PRINTF_CHK, "__printf_chk", false, false },
	{ CS_FN_VPRINTF, "vprintf", false, false },
	{ CS_FN_VPRINTF_CHK, "__vprintf_chk", false, false },
	{ CS_FN_PUTS, "puts", false, false },
	{ CS_FN_PUTCHAR, "putchar", false, false },
	{ CS_FN_FPRINTF, "fprintf", false, false },
	{ CS_FN_FPRINTF_CHK, "__fprintf_chk", false, false },
	{ CS_FN_VFPRINTF, "vfprintf", false, false },
	{ CS_FN_VFPRINTF_CHK, "__vfprintf_chk", false, false },
	{ CS_FN_FFLUSH, "fflush", false, false },
	{ CS_FN_FPUTS, "fputs", false, false },
	{ CS_FN_FPUTC, "fputc", false, false },
	{ CS_FN_PUTC, "putc", false, false },
	{ CS_FN_FWRITE, "fwrite", false, false },
};
const size_t sync_nfns = ARRAY_SIZE(sync_fns);

const char *sync_fn_name(unsigned fn)
{
	size_t i;

	for (i = 0; i < sync_nfns; i++)
		if ((unsigned)sync_fns[i].fn == fn)
			return sync_fns[i].name;
	return "?";
}

bool sync_fn_is_stdio(enum cs_sync_fn fn)
{
	return fn >= CS_FN_PRINTF && fn <= CS_FN_FWRITE;
}

int sync_drop_stdio(enum cs_sync_fn *fns, unsigned long *offsets, int n)
{
	int i, kept = 0;

	for (i = 0; i < n; i++) {
		if (sync_fn_is_stdio(fns[i]))
			continue;
		fns[kept] = fns[i];
		offsets[kept++] = offsets[i];
	}
	return kept;
}

static bool sync_fn_needs_return(enum cs_sync_fn fn)
{
	size_t i;

	for (i = 0; i < sync_nfns; i++)
		if (sync_fns[i].fn == fn)
			return sync_fns[i].ret;
	return false;
}

/* glibc's pthread_spin_lock begins with "lock decl (%rdi)"; the kernel
 * rejects uprobes on lock-prefixed instructions (ENOTSUPP). Look for the
 * 0xf0 prefix among the legacy prefix bytes at the entry. */
bool sync_starts_with_lock_prefix(const char *object, uint64_t off)
{
	unsigned char b[4];
	bool lock = false;
	int fd, i;

	fd = open(object, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (pread(fd, b, sizeof(b), off) == (ssize_t)sizeof(b)) {
		for (i = 0; i < 4; i++) {
			if (b[i] == 0xf0)
				lock = true;
			else if (b[i] != 0x66 && b[i] != 0xf2 && b[i] != 0xf3 && b[i] != 0x2e &&
				 b[i] != 0x3e && b[i] != 0x26 && b[i] != 0x36 && b[i] != 0x64 &&
				 b[i] != 0x65)
				break;
		}
	}
	close(fd);
	return lock;
}

/* glibc x86-64 pthread_spin_lock: "lock decl (%rdi); jne spin; xor %eax,
 * %eax; ret; ...". Every successful acquisition leaves through that
 * "xor %eax,%eax; ret", with the return address still on top of the stack,
 * so a probe there sees each acquisition and its call site. Only this exact
 * shape is accepted. */
bool sync_spin_lock_success_return(const char *object, uint64_t *off)
{
	static const unsigned char head[] = { 0xf0, 0xff, 0x0f, 0x75 };
	static const unsigned char tail[] = { 0x31, 0xc0, 0xc3 };
	unsigned char b[8];
	bool ok = false;
	int fd;

	fd = open(object, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (pread(fd, b, sizeof(b), *off) == (ssize_t)sizeof(b) && !memcmp(b, head, sizeof(head)) &&
	    !memcmp(b + 5, tail, sizeof(tail))) {
		*off += 5;
		ok = true;
	}
	close(fd);
	return ok;
}

int sync_find_offsets(const char *object, enum cs_sync_fn *fns, unsigned long *offsets)
{
	uint64_t off, size;
	size_t i;
	int n = 0, j, err;

	for (i = 0; i < sync_nfns; i++) {
		err = symbolize_lookup_function(object, sync_fns[i].name, &off, &size);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		if (sync_fns[i].fn == CS_FN_SPIN_LOCK_ACQUIRED)
			continue; /* derived from CS_FN_SPIN_LOCK below */
		if (sync_starts_with_lock_prefix(object, off)) {
			if (sync_fns[i].fn == CS_FN_SPIN_LOCK &&
			    sync_spin_lock_success_return(object, &off)) {
				fns[n] = CS_FN_SPIN_LOCK_ACQUIRED;
				offsets[n++] = off;
				continue;
			}
			log_debug("%s: %s starts with a lock-prefixed instruction, which x86 "
				  "uprobes refuse: not observed",
				  object, sync_fns[i].name);
			continue;
		}
		off = sync_probe_point(object, off, size, sync_fns[i].fn);
		for (j = 0; j < n; j++)
			if (offsets[j] == off)
				break;
		if (j < n)
			continue; /* alias of a function already probed */
		fns[n] = sync_fns[i].fn;
		offsets[n] = off;
		n++;
	}
	return n;
}

/* ---- which libc ----------------------------------------------------------- */

/* fn on each program header of path's ELF file, with its open fd, until
 * fn returns other than -ENOENT; returns that, -ENOENT when none did, or
 * -errno / -EINVAL (not an ELF file). */
static int elf_each_phdr(const char *path, int (*fn)(int fd, const GElf_Phdr *ph, void *arg),
			 void *arg)
{
	int fd, err = -ENOENT;
	size_t i, nph;
	GElf_Phdr ph;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &nph))
		err = -EINVAL;
	else
		for (i = 0; i < nph && err == -ENOENT; i++)
			if (gelf_getphdr(e, i, &ph))
				err = fn(fd, &ph, arg);
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

struct interp_buf {
	char *out;
	size_t len;
};

static int interp_phdr(int fd, const GElf_Phdr *ph, void *arg)
{
	struct interp_buf *b = arg;

	if (ph->p_type != PT_INTERP)
		return -ENOENT;
	if (ph->p_filesz == 0 || ph->p_filesz >= b->len ||
	    pread(fd, b->out, ph->p_filesz, ph->p_offset) != (ssize_t)ph->p_filesz)
		return -EINVAL;
	b->out[ph->p_filesz] = 0;
	return 0;
}

static int elf_interp(const char *path, char *out, size_t len)
{
	struct interp_buf b = { out, len };

	return elf_each_phdr(path, interp_phdr, &b);
}

struct exec_segment {
	struct sync_text *out;
	bool have_base;
	uint64_t base;
};

static int exec_segment_phdr(int fd, const GElf_Phdr *ph, void *arg)
{
	struct exec_segment *x = arg;

	(void)fd;
	if (ph->p_type != PT_LOAD)
		return -ENOENT;
	if (!x->have_base) {
		x->base = ph->p_vaddr & ~(uint64_t)0xfff;
		x->have_base = true;
	}
	if (!(ph->p_flags & PF_X) || !ph->p_filesz)
		return -ENOENT;
	x->out->off_lo = ph->p_offset;
	x->out->off_hi = ph->p_offset + ph->p_filesz;
	x->out->va_lo = ph->p_vaddr - x->base;
	x->out->va_hi = ph->p_vaddr + ph->p_memsz - x->base;
	return 0;
}

int sync_exec_segment(const char *path, struct sync_text *out)
{
	struct exec_segment x = { .out = out };

	memset(out, 0, sizeof(*out));
	return elf_each_phdr(path, exec_segment_phdr, &x);
}

/* cs_sync_rt_text: where libc's and ld.so's code lie (struct cs_rt_text),
 * from the entry probes' offsets (fns/offs, n of them). */
static int set_runtime_text(struct sync_probes *sp, const struct sync_runtime *rt,
			    const enum cs_sync_fn *fns, const unsigned long *offs, int n)
{
	struct cs_rt_text v = { 0 };
	struct sync_text libc, ldso;
	__u32 zero = 0;
	int i;

	if (!rt->is_static && !sync_exec_segment(rt->object, &libc)) {
		v.libc_off_lo = libc.off_lo;
		v.libc_off_hi = libc.off_hi;
		for (i = 0; i < n; i++)
			if ((unsigned)fns[i] < CS_FN__COUNT)
				v.fn_off[fns[i]] = offs[i];
	}
	if (!rt->is_static && rt->ldso[0] && !sync_exec_segment(rt->ldso, &ldso)) {
		v.ldso_lo = ldso.va_lo;
		v.ldso_hi = ldso.va_hi;
	}
	if (bpf_map__update_elem(sp->skel->maps.cs_sync_rt_text, &zero, sizeof(zero), &v, sizeof(v),
				 BPF_ANY)) {
		i = -errno;
		log_err("cannot give the probes %s's code range: %s", rt->object, strerror(-i));
		return i;
	}
	return 0;
}

size_t sync_parse_ldso_libs(const char *out, char *libs, size_t len)
{
	const char *line = out, *arrow, *end, *nl;
	size_t used = 0, n = 0, plen;

	if (len < 1)
		return 0;
	for (; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		arrow = strstr(line, "=> /");
		if (!arrow || (nl && arrow > nl))
			continue;
		arrow += 3;
		end = strstr(arrow, " (");
		if (!end || (nl && end > nl))
			end = nl ? nl : arrow + strlen(arrow);
		plen = (size_t)(end - arrow);
		if (used + plen + 2 > len)
			break;
		memcpy(libs + used, arrow, plen);
		used += plen;
		libs[used++] = 0;
		n++;
	}
	libs[used] = 0;
	return n;
}

/* "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)": the first
 * library whose file name (ld.so opens DIR/NAME) starts with libname. */
int sync_parse_ldso_list(const char *out, const char *libname, char *path, size_t len)
{
	size_t cap = strlen(out) + 2;
	char *libs = xcalloc(1, cap), *l, *base;
	int err = -ENOENT;

	sync_parse_ldso_libs(out, libs, cap);
	for (l = libs; *l; l += strlen(l) + 1) {
		base = strrchr(l, '/');
		if (base && !strncmp(base + 1, libname, strlen(libname))) {
			snprintf(path, len, "%s", l);
			err = 0;
			break;
		}
	}
	free(libs);
	return err;
}

/* Ask the program's own dynamic linker which libc it would load, with the
 * caller's environment (LD_LIBRARY_PATH, hwcaps subdirectories), as the
 * user the target will run as. ld.so --list maps but does not run it.
 * Every library it names goes to libs (sync_parse_ldso_libs). */
static int ldso_list_libc(const char *interp, const char *prog, char *libc, size_t len, char *libs,
			  size_t libs_len)
{
	char *argv[] = { (char *)interp, "--list", (char *)prog, NULL };
	struct launch_opts o = { .argv = argv, .stdin_fd = -1, .stderr_fd = -1 };
	char buf[16384];
	size_t used = 0;
	struct launch l;
	int p[2], err;
	ssize_t n;

	err = launcher_resolve_user(NULL, &o.uid, &o.gid, &o.drop_privs);
	if (err)
		return err;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	o.stdout_fd = p[1];
	o.stderr_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	err = launcher_prepare(&o, &l);
	close(p[1]);
	if (o.stderr_fd >= 0)
		close(o.stderr_fd);
	if (err) {
		close(p[0]);
		return err;
	}
	err = launcher_release(&l, interp);
	if (err) {
		close(p[0]);
		return err;
	}
	while (used < sizeof(buf) - 1 && (n = read(p[0], buf + used, sizeof(buf) - 1 - used)) > 0)
		used += n;
	buf[used] = 0;
	close(p[0]);
	if (launcher_wait(&l, 10000) != 1)
		launcher_kill(&l);
	sync_parse_ldso_libs(buf, libs, libs_len);
	return sync_parse_ldso_list(buf, "libc.so", libc, len);
}

int sync_runtime_for_exec(const struct target_info *ti, struct sync_runtime *rt)
{
	char interp[PATH_MAX], libc[PATH_MAX];
	int err;

	memset(rt, 0, sizeof(*rt));
	if (ti->is_static) {
		if (!ti->has_symtab) {
			log_err("%s: static and stripped: no symbol table to find its pthread "
				"functions in (rebuild without -s)",
				ti->path);
			return -ENOENT;
		}
		rt->is_static = true;
		snprintf(rt->object, sizeof(rt->object), "%s", ti->path);
		return 0;
	}
	err = elf_interp(ti->path, interp, sizeof(interp));
	if (err) {
		log_err("%s: cannot read its program interpreter: %s", ti->path, strerror(-err));
		return err;
	}
	err = ldso_list_libc(interp, ti->path, libc, sizeof(libc), rt->libs, sizeof(rt->libs));
	if (err) {
		log_err("%s: its dynamic linker %s does not load a libc.so (not a glibc program?)",
			ti->path, interp);
		return -ENOENT;
	}
	if (!realpath(libc, rt->object) || !realpath(interp, rt->ldso)) {
		log_err("%s: cannot resolve %s: %s", ti->path, libc, strerror(errno));
		return -ENOENT;
	}
	return 0;
}

int sync_runtime_for_pid(pid_t pid, struct sync_runtime *rt)
{
	struct symbolizer *s;
	const char *libc, *ldso;
	char exe[64];
	uint64_t off;
	ssize_t n;

	memset(rt, 0, sizeof(*rt));
	s = symbolize_new(pid);
	if (!s) {
		int err = -errno;

		if (err == -ENOENT || err == -ESRCH)
			log_err("pid %d: no such process", (int)pid);
		else
			log_err("pid %d: cannot read /proc/%d/maps: %s", (int)pid, (int)pid,
				strerror(-err));
		return err;
	}
	libc = symbolize_find_object(s, "libc.so");
	if (!libc)
		libc = symbolize_find_object(s, "libc-");
	ldso = symbolize_find_object(s, "ld-linux");
	if (libc) {
		/* A process in another mount namespace (a container) maps
		 * files we may not see under the same path: go through its
		 * root. */
		if (access(libc, R_OK) == 0)
			snprintf(rt->object, sizeof(rt->object), "%s", libc);
		else
			snprintf(rt->object, sizeof(rt->object), "/proc/%d/root%s", (int)pid, libc);
		if (ldso && access(ldso, R_OK) == 0)
			snprintf(rt->ldso, sizeof(rt->ldso), "%s", ldso);
		else if (ldso)
			snprintf(rt->ldso, sizeof(rt->ldso), "/proc/%d/root%s", (int)pid, ldso);
		symbolize_free(s);
		return 0;
	}
	symbolize_free(s);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, rt->object, sizeof(rt->object) - 1);
	if (n <= 0) {
		log_err("pid %d: cannot read its executable: %s", (int)pid, strerror(errno));
		return -ESRCH;
	}
	rt->object[n] = 0;
	if (symbolize_lookup_function(rt->object, "pthread_mutex_lock", &off, NULL)) {
		log_err("pid %d: maps no libc and %s has no pthread symbols: nothing to probe",
			(int)pid, rt->object);
		return -ENOENT;
	}
	rt->is_static = true;
	return 0;
}

/* ---- BPF object ------------------------------------------------------------- */

int sync_probes_open(struct sync_probes *sp, const struct sync_probe_opts *o)
{
	struct sync_bpf *skel;
	int err;

	memset(sp, 0, sizeof(*sp));
	sp->opts = *o;
	skel = sync_bpf__open();
	if (!skel) {
		err = -errno;
		log_err("cannot open the sync probes BPF object: %s", strerror(-err));
		return err;
	}
	skel->rodata->cs_sync_scope = o->scope;
	skel->rodata->cs_follow_forks = o->follow_forks;
	if (o->comm)
		strncpy((char *)skel->rodata->cs_comm, o->comm, sizeof(skel->rodata->cs_comm) - 1);
	skel->rodata->cs_cgroup_id = o->cgroup_id;
	skel->rodata->cs_cgroup_level = o->cgroup_level;
	if (o->ringbuf_bytes)
		bpf_map__set_max_entries(skel->maps.cs_sync_events, o->ringbuf_bytes);
	if (o->before_load) {
		err = o->before_load(skel->obj, o->before_load_arg);
		if (err) {
			sync_bpf__destroy(skel);
			return err;
		}
	}
	err = sync_bpf__load(skel);
	if (err) {
		log_err("cannot load the sync probes: %s%s", strerror(-err),
			geteuid() ? " (run as root)" : "");
		sync_bpf__destroy(skel);
		return err;
	}
	sp->skel = skel;
	return 0;
}

int sync_probes_track(struct sync_probes *sp, pid_t tgid)
{
	struct cs_proc p = { 0 };
	__u32 key = tgid;

	if (bpf_map__update_elem(sp->skel->maps.cs_sync_tracked, &key, sizeof(key), &p, sizeof(p),
				 BPF_ANY))
		return -errno;
	return 0;
}

int sync_probes_know_file(struct sync_probes *sp, uint32_t dev, uint64_t ino)
{
	struct cs_inode_key k = { .ino = ino, .dev = dev };
	__u8 one = 1;

	if (!sp->skel)
		return -EINVAL;
	if (bpf_map__update_elem(sp->skel->maps.cs_sync_known, &k, sizeof(k), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	return 0;
}

static int mark_runtime_object(struct sync_probes *sp, const char *path)
{
	struct cs_inode_key k = { 0 };
	__u32 one = 1;
	struct stat st;

	if (!path[0])
		return 0;
	if (stat(path, &st))
		return -errno;
	k.ino = st.st_ino;
	/* The kernel's dev_t encoding, as BPF reads it from the superblock. */
	k.dev = (major(st.st_dev) << 20) | minor(st.st_dev);
	if (bpf_map__update_elem(sp->skel->maps.cs_sync_runtime, &k, sizeof(k), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	return 0;
}

static int add_link(struct sync_probes *sp, struct bpf_link *link, const char *what)
{
	int err;

	if (!link) {
		err = -errno;
		log_err("cannot attach %s: %s%s", what, strerror(-err),
			err == -EPERM || err == -EACCES ? " (run as root)" : "");
		return err;
	}
	if (sp->nlinks >= SYNC_MAX_LINKS) {
		bpf_link__destroy(link);
		log_err("too many probe links");
		return -E2BIG;
	}
	sp->links[sp->nlinks++] = link;
	return 0;
}

static int attach_tracepoints(struct sync_probes *sp)
{
	int err;

	err = add_link(sp, bpf_program__attach(sp->skel->progs.cs_sync_fork),
		       "tracepoint sched_process_fork");
	if (!err)
		err = add_link(sp, bpf_program__attach(sp->skel->progs.cs_sync_thread_exit),
			       "tracepoint sched_process_exit");
	if (!err)
		err = add_link(sp, bpf_program__attach(sp->skel->progs.cs_sync_exec),
			       "tracepoint sched_process_exec");
	return err;
}

/* prog's uprobe.multi link on the functions (cookie: the function).
 * x86 uprobes refuse some first instructions (lock-prefixed ones: glibc's
 * pthread_spin_lock starts with "lock decl"), and one refusal fails the
 * whole link: then each function is tried alone, those a single probe
 * refuses are dropped (fns, offs and *n keep the others) and the link is
 * made on the rest. The first link's attach is the test: a set that
 * attaches whole costs no trial link (whose detach waits ~20 ms for a
 * grace period, docs/perf.md). NULL: errno. */
static struct bpf_link *attach_probeable(struct sync_probes *sp, struct bpf_program *prog,
					 const char *object, pid_t pid, enum cs_sync_fn *fns,
					 unsigned long *offs, __u64 *cookies, int *n)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o);
	struct bpf_link *link;
	int i, kept = 0;

	for (i = 0; i < *n; i++)
		cookies[i] = fns[i];
	o.offsets = offs;
	o.cookies = cookies;
	o.cnt = *n;
	link = bpf_program__attach_uprobe_multi(prog, pid, object, NULL, &o);
	if (link)
		return link;
	for (i = 0; i < *n; i++) {
		o.offsets = &offs[i];
		o.cookies = &cookies[i];
		o.cnt = 1;
		link = bpf_program__attach_uprobe_multi(prog, pid, object, NULL, &o);
		if (!link) {
			sp->skipped[sp->nskipped++] = fns[i];
			log_debug("%s: cannot probe %s (%s): not observed", object,
				  sync_fn_name(fns[i]), strerror(errno));
			continue;
		}
		bpf_link__destroy(link);
		fns[kept] = fns[i];
		offs[kept] = offs[i];
		cookies[kept++] = cookies[i];
	}
	*n = kept;
	o.offsets = offs;
	o.cookies = cookies;
	o.cnt = kept;
	return bpf_program__attach_uprobe_multi(prog, pid, object, NULL, &o);
}

int sync_probes_attach(struct sync_probes *sp, const struct sync_runtime *rt, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, eo);
	LIBBPF_OPTS(bpf_uprobe_multi_opts, ro);
	enum cs_sync_fn fns[CS_FN__COUNT];
	unsigned long offs[CS_FN__COUNT], roffs[CS_FN__COUNT];
	__u64 cookies[CS_FN__COUNT], rcookies[CS_FN__COUNT];
	char what[PATH_MAX + 64];
	int n, i, nr = 0, err;

	if (pid == -1 && sp->attached_all && sp->nlinks &&
	    !strcmp(sp->attached_object, rt->object)) {
		log_debug("sync probes: the campaign's links on %s serve this run", rt->object);
		return 0;
	}
	if (sp->nlinks) /* another object or a pid filter: start over */
		sync_probes_detach(sp);
	n = sync_find_offsets(rt->object, fns, offs);
	if (n < 0) {
		log_err("%s: cannot read its symbol table: %s", rt->object, strerror(-n));
		return n;
	}
	if (n == 0) {
		log_err("%s: no pthread synchronization functions found", rt->object);
		return -ENOENT;
	}
	if (!sp->opts.commit)
		n = sync_drop_stdio(fns, offs, n);
	if (!rt->is_static) {
		err = mark_runtime_object(sp, rt->object);
		if (!err)
			err = mark_runtime_object(sp, rt->ldso);
		if (err) {
			log_err("%s: %s", rt->object, strerror(-err));
			return err;
		}
	}
	err = attach_tracepoints(sp);
	if (err)
		return err;
	/* The park program before the entry program: a uprobe runs its
	 * consumers newest first, and the park must come after the entry's
	 * mark and event. The first of them drops what cannot be probed. */
	if (sp->opts.commit) {
		snprintf(what, sizeof(what), "park uprobes to pthread functions in %s", rt->object);
		err = add_link(sp,
			       attach_probeable(sp, sp->skel->progs.cs_sync_commit, rt->object, pid,
						fns, offs, cookies, &n),
			       what);
		if (err)
			return err;
		eo.offsets = offs;
		eo.cookies = cookies;
		eo.cnt = n;
		snprintf(what, sizeof(what), "uprobes to %d pthread functions in %s", n,
			 rt->object);
		err = add_link(sp,
			       bpf_program__attach_uprobe_multi(sp->skel->progs.cs_sync_enter, pid,
								rt->object, NULL, &eo),
			       what);
	} else {
		snprintf(what, sizeof(what), "uprobes to pthread functions in %s", rt->object);
		err = add_link(sp,
			       attach_probeable(sp, sp->skel->progs.cs_sync_enter, rt->object, pid,
						fns, offs, cookies, &n),
			       what);
	}
	if (!err)
		err = set_runtime_text(sp, rt, fns, offs, n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (sync_fn_needs_return(fns[i])) {
			roffs[nr] = offs[i];
			rcookies[nr++] = fns[i];
		}
	}
	ro.offsets = roffs;
	ro.cookies = rcookies;
	ro.cnt = nr;
	ro.retprobe = true;
	snprintf(what, sizeof(what), "uretprobes to %d pthread functions in %s", nr, rt->object);
	err = add_link(sp,
		       bpf_program__attach_uprobe_multi(sp->skel->progs.cs_sync_return, pid,
							rt->object, NULL, &ro),
		       what);
	if (err)
		return err;
	sp->nprobes += n;
	sp->attached_all = pid == -1;
	snprintf(sp->attached_object, sizeof(sp->attached_object), "%s", rt->object);
	log_debug("sync probes: %d entry + %d return probes on %s (pid %d)", n, nr, rt->object,
		  (int)pid);
	return 0;
}

void sync_probes_detach(struct sync_probes *sp)
{
	links_destroy(sp->links, (size_t)sp->nlinks);
	links_reap_wait(&sp->reaper);
	sp->nlinks = 0;
	sp->attached_all = false;
}

void sync_probes_close(struct sync_probes *sp)
{
	sync_probes_detach(sp);
	if (sp->skel)
		sync_bpf__destroy(sp->skel);
	sp->skel = NULL;
}

int sync_probes_stats(struct sync_probes *sp, uint64_t out[CS_SSTAT__COUNT])
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(sp->skel->maps.cs_sync_stats);
	__u32 keys[CS_SSTAT__COUNT], count = CS_SSTAT__COUNT, k, outb = 0;
	__u64 *v;
	int c;

	if (ncpu <= 0)
		return ncpu;
	memset(out, 0, CS_SSTAT__COUNT * sizeof(*out));
	v = xcalloc((size_t)ncpu * CS_SSTAT__COUNT, sizeof(*v));
	/* One batch; key by key on a kernel without batch lookups. */
	if (bpf_map_lookup_batch(fd, NULL, &outb, keys, v, &count, NULL) && errno != ENOENT) {
		for (k = 0, count = 0; k < CS_SSTAT__COUNT; k++) {
			keys[count] = k;
			if (!bpf_map_lookup_elem(fd, &k, v + (size_t)count * ncpu))
				count++;
		}
	}
	for (k = 0; k < count; k++)
		for (c = 0; c < ncpu; c++)
			if (keys[k] < CS_SSTAT__COUNT)
				out[keys[k]] += v[(size_t)k * ncpu + c];
	free(v);
	return 0;
}

static void map_empty_m(struct bpf_map *m)
{
	maps_empty(bpf_map__fd(m), bpf_map__key_size(m), bpf_map__value_size(m));
}

/* Links for one process: destroyed behind the caller's back (grace
 * periods it need not wait for). */
static void reap_process_links(struct sync_probes *sp)
{
	if (!sp->attached_all && sp->nlinks) {
		links_reap_later(&sp->reaper, sp->links, (size_t)sp->nlinks);
		sp->nlinks = 0;
	}
}

void sync_probes_end_run(struct sync_probes *sp)
{
	reap_process_links(sp);
	/* The probes act for tracked processes only (CS_SCOPE_TRACKED). */
	if (sp->skel)
		map_empty_m(sp->skel->maps.cs_sync_tracked);
}

int sync_probes_reset(struct sync_probes *sp)
{
	static const char *const per_run[] = {
		"cs_sync_tracked",
		"cs_sync_pthreads",
		"cs_sync_vmas",
		"cs_sync_known",
		"cs_sync_execs",
		/* emptied by a harvest that took them */
		"cs_sync_threads",
		"cs_sync_locks",
		"cs_sync_sp",
		"cs_sync_goodlock",
		"cs_sync_hb",
		"cs_sync_sync",
	};
	const size_t not_taken = 5;
	struct bpf_map *m;
	size_t i;
	void *zero;
	int ncpu = libbpf_num_possible_cpus();
	__u32 k;

	if (!sp->skel)
		return -EINVAL;
	reap_process_links(sp);
	for (i = 0; i < ARRAY_SIZE(per_run); i++) {
		if (i >= not_taken && sp->harvest_emptied)
			break;
		m = bpf_object__find_map_by_name(sp->skel->obj, per_run[i]);
		if (m)
			map_empty_m(m);
	}
	/* The counting maps' key logs start again. A map the harvest took
	 * by key is empty unless its count grew since (a process left
	 * behind still ran): then it is walked. One the harvest walked is
	 * empty already, one no harvest took was walked above. */
	m = bpf_object__find_map_by_name(sp->skel->obj, "cs_sync_keylog_n");
	for (k = 0; m && k < CS_KEYLOG__COUNT; k++) {
		static const char *const counted[CS_KEYLOG__COUNT] = {
			[CS_KEYLOG_SP] = "cs_sync_sp",
			[CS_KEYLOG_GOODLOCK] = "cs_sync_goodlock",
			[CS_KEYLOG_HB] = "cs_sync_hb",
			[CS_KEYLOG_SYNC] = "cs_sync_sync",
		};
		__u64 n = 0, none = 0;
		struct bpf_map *cm;

		if (sp->harvest_emptied && sp->keylog_taken[k] >= 0 &&
		    !bpf_map__lookup_elem(m, &k, sizeof(k), &n, sizeof(n), 0) &&
		    n != (__u64)sp->keylog_taken[k] &&
		    (cm = bpf_object__find_map_by_name(sp->skel->obj, counted[k])))
			map_empty_m(cm);
		bpf_map__update_elem(m, &k, sizeof(k), &none, sizeof(none), 0);
	}
	sp->harvest_emptied = false;
	m = bpf_object__find_map_by_name(sp->skel->obj, "cs_sync_stats");
	if (m && ncpu > 0) {
		__u32 n = bpf_map__max_entries(m), *keys = xcalloc(n, sizeof(*keys));

		zero = xcalloc((size_t)ncpu * n, bpf_map__value_size(m));
		for (k = 0; k < n; k++)
			keys[k] = k;
		/* One batch; key by key on a kernel without batch updates. */
		if (bpf_map_update_batch(bpf_map__fd(m), keys, zero, &n, NULL))
			for (k = 0; k < bpf_map__max_entries(m); k++)
				bpf_map__update_elem(m, &k, sizeof(k), zero,
						     (size_t)ncpu * bpf_map__value_size(m), 0);
		free(keys);
		free(zero);
	}
	return 0;
}

int sync_probes_map_fd(struct sync_probes *sp, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(sp->skel->obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}
