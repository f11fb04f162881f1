// SPDX-License-Identifier: MIT
/*
 * A campaign command (run, replay) run inside the sched_ext VM
 * (docs/vm.md). A run streams its store out as it commits runs
 * (results/stream.h): the host keeps a copy of it at the campaign's place,
 * so an interruption (^C, kill -9, a VM that dies) loses at most the run in
 * flight. The guest's /out also comes back at the end, into a private
 * scratch directory under $TMPDIR (or /tmp) named after our pid; when the
 * stream did not arrive whole, the campaign in it is moved into place
 * (renamed, or copied across filesystems) instead. A
 * replay brings nothing back and needs no scratch directory, so it works
 * on a campaign it cannot write. Scratch directories of processes that are
 * gone (kill -9) are removed by the next run or replay.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/onerun.h"
#include "results/store.h"
#include "results/stream.h"
#include "run/vm_campaign.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/self.h"
#include "lib/shell.h"
#include "lib/tree.h"
#include "lib/xalloc.h"
#include "vm/vm.h"

#define SCRATCH_PREFIX "concsched-out."
#define KEPT_PREFIX    "concsched-kept."

static const char *scratch_parent(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/* The DIR.vm-XXXXXX an older concsched left next to DIR when it was
 * killed: remove it when empty (a non-empty one may hold a campaign). */
static void sweep_legacy(const char *host_out)
{
	char *slash, *dir, *base;
	struct dirent *e;
	size_t blen;
	DIR *d;

	if (!host_out || !*host_out)
		return;
	dir = xstrdup(host_out);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		base = slash + 1;
		d = opendir(*dir ? dir : "/");
	} else {
		base = dir;
		d = opendir(".");
	}
	blen = strlen(base);
	while (d && (e = readdir(d))) {
		char *p;

		if (strncmp(e->d_name, base, blen) || strncmp(e->d_name + blen, ".vm-", 4) ||
		    strlen(e->d_name + blen + 4) != 6)
			continue;
		p = slash ? xasprintf("%s/%s", *dir ? dir : "", e->d_name) : xstrdup(e->d_name);
		if (!rmdir(p))
			log_debug("removed the empty %s a killed campaign left", p);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
}

void vm_campaign_scratch_sweep(const char *host_out)
{
	const char *parent = scratch_parent();
	DIR *d = opendir(parent);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		struct stat st;
		char *p;
		int pid;

		if (sscanf(e->d_name, SCRATCH_PREFIX "%d.", &pid) != 1 || pid <= 0 ||
		    pid == (int)getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		p = xasprintf("%s/%s", parent, e->d_name);
		if (!lstat(p, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid()) {
			int err = tree_remove(p);

			if (err)
				log_warn("cannot remove %s, left by a VM campaign that was killed: "
					 "%s",
					 p, strerror(-err));
			else
				log_debug("removed %s, left by a VM campaign that was killed", p);
		}
		free(p);
	}
	if (d)
		closedir(d);
	sweep_legacy(host_out);
}

/* Move the campaign that came back (from) to host_out; on failure keep
 * it under a name the sweep leaves alone and say where. */
static int move_campaign(const char *tmp, const char *from, const char *host_out)
{
	char *kept, *base, *parent = xstrdup(host_out), *slash = strrchr(parent, '/');
	int err = 0;

	/* `run -o a/b/camp` creates a/b natively (store_create): here too. */
	if (slash && slash != parent) {
		*slash = '\0';
		err = tree_mkdir_p(parent, 0755);
	}
	free(parent);
	if (!err)
		err = tree_move(from, host_out);
	if (!err) {
		tree_remove(tmp);
		return 0;
	}
	base = strrchr(tmp, '/');
	kept = xasprintf("%.*s/" KEPT_PREFIX "%s", (int)(base - tmp), tmp,
			 base + 1 + strlen(SCRATCH_PREFIX));
	if (!rename(tmp, kept))
		log_err("cannot move the campaign to %s: %s (it is in %s/%s)", host_out,
			strerror(-err), kept, from + strlen(tmp) + 1);
	else
		log_err("cannot move the campaign to %s: %s (it is in %s)", host_out,
			strerror(-err), from);
	free(kept);
	return err;
}

/* The host end of a run's stream: the copy of its store at host_out. */
struct vm_stream {
	const char *host_out;
	struct stream_reader rd;
	struct store *replica;
	bool ended;  /* the guest closed its store */
	bool broken; /* a record could not be applied: the copy is behind */
	bool tty, progress_shown;
	int (*record_fn)(char kind, const void *data, size_t len, void *arg);
	void *record_arg;
};

static int stream_record(char kind, const void *data, size_t len, void *arg)
{
	struct vm_stream *vs = arg;

	switch (kind) {
	case STREAM_SNAPSHOT:
		if (!vs->host_out)
			return -EPROTO;
		if (vs->replica)
			return -EPROTO;
		return store_replica_create(vs->host_out, data, len, &vs->replica);
	case STREAM_CHANGESET:
		return vs->replica ? store_replica_apply(vs->replica, data, len) : -EPROTO;
	case STREAM_PROGRESS:
		if (vs->tty) {
			fprintf(stderr, "\r\033[K%.*s", (int)len, (const char *)data);
			fflush(stderr);
			vs->progress_shown = len > 0;
		}
		return 0;
	case STREAM_END:
		vs->ended = true;
		return 0;
	default: /* the caller's, or a newer guest's record: not ours to read */
		return vs->record_fn ? vs->record_fn(kind, data, len, vs->record_arg) : 0;
	}
}

static void clear_progress(struct vm_stream *vs)
{
	if (vs->progress_shown)
		fputs("\r\033[K", stderr);
	vs->progress_shown = false;
}

static void vm_chan(enum vm_chan chan, const void *data, size_t n, void *arg)
{
	struct vm_stream *vs = arg;
	int err;

	switch (chan) {
	case VM_CHAN_STDOUT:
		file_write_all(STDOUT_FILENO, data, n);
		break;
	case VM_CHAN_STDERR:
		clear_progress(vs);
		fflush(stderr);
		file_write_all(STDERR_FILENO, data, n);
		break;
	case VM_CHAN_STREAM:
		if (vs->broken)
			break;
		err = stream_feed(&vs->rd, data, n, stream_record, vs);
		if (err) {
			vs->broken = true;
			clear_progress(vs);
			log_warn("the campaign stream from the VM broke (%s): the campaign comes "
				 "back when the VM ends",
				 strerror(-err));
		}
		break;
	case VM_CHAN_STARTED:
		fprintf(stderr, "concsched: the VM is up (%.1f s)\n", n / 1000.0);
		break;
	}
}

/* Run `concsched ARGV...` in the VM; when sub, the campaign streams into
 * host_out, and the guest's /out comes back into a scratch directory from
 * which /out/SUB is moved to host_out if the stream did not arrive whole. */
int vm_campaign_run(char **guest_argv, const char *host_out, const char *sub,
		    const char *const *carry, unsigned timeout_s, unsigned cpus)
{
	return vm_campaign_run_records(guest_argv, host_out, sub, carry, timeout_s, cpus, NULL,
				       NULL);
}

int vm_campaign_run_records(char **guest_argv, const char *host_out, const char *sub,
			    const char *const *carry, unsigned timeout_s, unsigned cpus,
			    int (*record_fn)(char kind, const void *data, size_t len, void *arg),
			    void *record_arg)
{
	char *env_dir = xasprintf("CONCSCHED_HOST_DIR=%s", host_out);
	char host[256] = "", *env_host;
	const char *env[6] = { env_dir };
	struct vm_stream vs = { .host_out = sub ? host_out : NULL,
				.tty = isatty(STDERR_FILENO),
				.record_fn = record_fn,
				.record_arg = record_arg };
	struct vm_opts vo = { 0 };
	struct vm_result vr;
	char *tmp = NULL, *from = NULL;
	int err, ret, ne = 1;

	gethostname(host, sizeof(host) - 1);
	env_host = xasprintf("CONCSCHED_HOST_NAME=%s", host);
	env[ne++] = env_host;
	self_command_env(&env[ne], &env[ne + 1]);
	ne += 2;
	if (!onerun_sched_ext_supported())
		env[ne++] = "CONCSCHED_HOST_NO_SCHED_EXT=1";
	if (sub) {
		tmp = xasprintf("%s/" SCRATCH_PREFIX "%d.XXXXXX", scratch_parent(), (int)getpid());
		if (!mkdtemp(tmp)) {
			log_err("cannot create a scratch directory %s: %s (set TMPDIR to a "
				"writable directory)",
				tmp, strerror(errno));
			ret = EXIT_USAGE;
			goto out;
		}
	}
	vo.env = env;
	vo.argv = guest_argv;
	vo.timeout_s = timeout_s;
	vo.cpus = cpus;
	vo.mem_mb = 2048;
	vo.carry = carry;
	vo.out_dir = tmp;
	vo.stdout_fd = vo.stderr_fd = -1;
	/* CONCSCHED_VM_NO_STREAM=1: only the campaign that comes back at the
	 * end (the fallback when a stream breaks; tests use it). */
	if ((sub || record_fn) && !getenv("CONCSCHED_VM_NO_STREAM")) {
		vo.chan_fn = vm_chan;
		vo.chan_arg = &vs;
	}
	err = vm_run(&vo, &vr);
	clear_progress(&vs);
	if (vs.replica && !vs.broken && stream_pending(&vs.rd))
		log_debug("vm: %zu bytes of a record in flight were lost", stream_pending(&vs.rd));
	if (err) {
		ret = EXIT_USAGE;
		goto out;
	}
	ret = vr.outcome == VM_EXITED ? vr.exit_code : EXIT_USAGE;
	if (vr.outcome == VM_DIED)
		log_err("the VM died during the campaign: %s", vr.reason);
	else if (vr.outcome == VM_TIMEOUT)
		log_err("the VM campaign ran past its time limit: %s", vr.reason);
	else if (vr.outcome == VM_INTERRUPTED)
		ret = 128 + vr.signal;
	if (!sub)
		goto out;
	from = xasprintf("%s/%s", tmp, sub);
	if (vs.replica && vs.ended && !vs.broken) {
		/* The copy is the whole campaign: the tar's is not needed. */
		log_debug("vm: the streamed copy in %s is the campaign (%lld runs)", host_out,
			  (long long)store_count_runs(vs.replica));
		store_close(vs.replica);
		vs.replica = NULL;
	} else if (access(from, F_OK) == 0) {
		/* The stream broke or stopped early: the campaign that came
		 * back whole replaces what arrived of it. */
		if (vs.replica) {
			log_debug("vm: the stream %s: the campaign that came back replaces it",
				  vs.broken ? "broke" : "did not end");
			store_close(vs.replica);
			vs.replica = NULL;
			tree_remove(host_out);
		}
		if (move_campaign(tmp, from, host_out)) {
			ret = EXIT_USAGE;
			free(tmp);
			tmp = NULL; /* kept */
			goto out;
		}
	} else if (vs.replica) {
		int64_t runs = store_count_runs(vs.replica);
		char q[PATH_MAX];

		store_close(vs.replica);
		vs.replica = NULL;
		fprintf(stderr,
			"concsched: %s; the %lld runs committed before are in %s (%s report %s)\n",
			vr.outcome == VM_INTERRUPTED ? "interrupted"
			: vr.outcome == VM_DIED	     ? "the VM died"
						     : "the campaign did not end",
			(long long)runs, host_out, self_command(false),
			shell_quote(host_out, q, sizeof(q)));
		if (ret == 0 || ret == 1)
			ret = EXIT_USAGE;
	} else {
		if (!vr.out_complete)
			log_err("no campaign came back from the VM (see the messages above)");
		if (ret == 0 || ret == 1)
			ret = EXIT_USAGE;
		goto out;
	}
	if (getenv("SUDO_UID")) {
		char q[4200];
		char *cmd = xasprintf("chown -R %s:%s %s", getenv("SUDO_UID"),
				      getenv("SUDO_GID") ? getenv("SUDO_GID") : "",
				      shell_quote(host_out, q, sizeof(q)));

		if (system(cmd))
			log_warn("cannot hand %s to the sudo user", host_out);
		free(cmd);
	}
out:
	store_close(vs.replica);
	stream_reader_free(&vs.rd);
	if (tmp)
		tree_remove(tmp);
	free(from);
	free(tmp);
	free(env_host);
	free(env_dir);
	return ret;
}
