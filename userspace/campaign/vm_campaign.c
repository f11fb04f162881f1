// SPDX-License-Identifier: MIT
/*
 * A campaign command (run, replay) run inside the sched_ext VM
 * (docs/vm.md): the guest's /out comes back into a temporary directory next
 * to the campaign and is moved into place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign/onerun.h"
#include "campaign/vm_campaign.h"
#include "lib/util.h"
#include "vm/vm.h"

/* Run `concsched ARGV...` in the VM with the guest's /out received into
 * a temporary directory next to host_out, then move /out/SUB there. */
int run_in_vm(char **guest_argv, const char *host_out, const char *sub, const char *const *carry,
	      unsigned timeout_s, unsigned cpus)
{
	char *env_dir = xasprintf("CONCSCHED_HOST_DIR=%s", host_out);
	const char *env[] = { env_dir, NULL, NULL };
	struct vm_opts vo = { 0 };
	struct vm_result vr;
	char *tmp, *from;
	int err, ret;

	tmp = xasprintf("%s.vm-XXXXXX", host_out);
	if (!mkdtemp(tmp)) {
		cs_err("cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		free(env_dir);
		return EXIT_USAGE;
	}
	if (!sched_ext_supported())
		env[1] = "CONCSCHED_HOST_NO_SCHED_EXT=1";
	vo.env = env;
	vo.argv = guest_argv;
	vo.timeout_s = timeout_s;
	vo.cpus = cpus;
	vo.mem_mb = 2048;
	vo.carry = carry;
	vo.out_dir = tmp;
	vo.stdout_fd = vo.stderr_fd = -1;
	err = vm_run(&vo, &vr);
	if (err) {
		rmdir(tmp);
		free(tmp);
		free(env_dir);
		return EXIT_USAGE;
	}
	ret = vr.outcome == VM_EXITED ? vr.exit_code : EXIT_USAGE;
	if (vr.outcome == VM_DIED)
		cs_err("the VM died during the campaign: %s", vr.reason);
	else if (vr.outcome == VM_TIMEOUT)
		cs_err("the VM campaign ran past its time limit: %s", vr.reason);
	else if (vr.outcome == VM_INTERRUPTED)
		ret = 128 + vr.signal;
	from = sub ? xasprintf("%s/%s", tmp, sub) : NULL;
	if (from && access(from, F_OK) == 0) {
		if (rename(from, host_out)) {
			cs_err("cannot move the campaign to %s: %s (it is in %s)", host_out,
			       strerror(errno), from);
			ret = EXIT_USAGE;
		} else {
			rmdir(tmp);
		}
		if (getenv("SUDO_UID")) {
			char *cmd =
				xasprintf("chown -R %s:%s '%s'", getenv("SUDO_UID"),
					  getenv("SUDO_GID") ? getenv("SUDO_GID") : "", host_out);
			if (system(cmd))
				cs_warn("cannot hand %s to the sudo user", host_out);
			free(cmd);
		}
	} else if (from) {
		if (!vr.out_complete)
			cs_err("no campaign came back from the VM (see the messages above)");
		rmdir(tmp);
		if (ret == 0 || ret == 1)
			ret = EXIT_USAGE;
	} else {
		rmdir(tmp);
	}
	free(from);
	free(tmp);
	free(env_dir);
	return ret;
}
